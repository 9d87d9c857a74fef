/**
 * Checks on what the caller hands the client, made before anything is encoded: a value the wire
 * cannot carry fails here, naming the field, instead of as a RangeError deep inside a buffer write.
 * Names are the broker's to judge, so that refusal has one source. An empty record is refused at
 * send (producer and topic): the broker refuses it as CORRUPT_REQUEST, and with it every other record
 * of the request. `Connection.produce` still sends exactly what it is given, refusal included.
 */
import { InvalidArgumentError } from './errors.js';
import { INT32_MAX } from './limits.js';

/**
 * Offsets are plain numbers. An int64 offset beyond 2^53 would silently round in a double, so the
 * client refuses to send one (and protocol refuses to decode one) rather than read the wrong record.
 */
export function checkOffset(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(`${field}: ${value}, expected an integer 0..2^53-1`);
  }
  return value;
}

/** An int32 wire field with a lower bound (partition >= 0, maxBytes >= 1, ...). */
export function checkInt32(field: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min || value > INT32_MAX) {
    throw new InvalidArgumentError(`${field}: ${value}, expected an integer ${min}..${INT32_MAX}`);
  }
  return value;
}

/** A count or duration of our own (not a wire field): a non-negative integer, or >= min. */
export function checkCount(field: string, value: number, min = 0): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`${field}: ${value}, expected an integer >= ${min}`);
  }
  return value;
}

/** A record's payload: at least one byte (the protocol has no empty record). */
export function checkPayload(field: string, payload: Uint8Array): Uint8Array {
  if (payload.length === 0) {
    throw new InvalidArgumentError(
      `${field}: empty, expected at least 1 byte (the broker refuses an empty record, and the whole request with it)`,
    );
  }
  return payload;
}
