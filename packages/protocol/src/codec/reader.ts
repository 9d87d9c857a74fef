import { ProtocolError } from '../errors.js';

/**
 * Bytes that do not decode: a field runs past the end, a count is impossible, a string is not UTF-8.
 * The message names the field (`partition: -1, expected >= 0`). Request decoders turn it into
 * CORRUPT_REQUEST; for a response it is a protocol error.
 */
export class DecodeError extends ProtocolError {
  override name = 'DecodeError';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A bounds-checked big-endian reader over one frame. Every read names its field for the error. */
export class WireReader {
  offset: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.offset = start;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(bytes: number, field: string): void {
    if (this.end - this.offset < bytes) {
      throw new DecodeError(`${field}: needs ${bytes} bytes, ${this.end - this.offset} left in the frame`);
    }
  }

  int8(field: string): number {
    this.need(1, field);
    return this.buf.readInt8(this.offset++);
  }

  int16(field: string): number {
    this.need(2, field);
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  uint16(field: string): number {
    this.need(2, field);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(field: string): number {
    this.need(4, field);
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  uint32(field: string): number {
    this.need(4, field);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  /**
   * An int64 as a number. Values beyond 2^53 come back rounded; callers that must be exact
   * (offsets a client will send back) check against `offsetMax`.
   */
  int64(field: string): number {
    this.need(8, field);
    const high = this.buf.readInt32BE(this.offset);
    const low = this.buf.readUInt32BE(this.offset + 4);
    this.offset += 8;
    return high * 0x1_0000_0000 + low;
  }

  /** A u16-length-prefixed UTF-8 string; invalid UTF-8 is a decode error, never a replacement char. */
  string(field: string): string {
    // No `${field} length` built unless it fails: answers of thousands of names read many strings.
    if (this.end - this.offset < 2) this.need(2, `${field} length`);
    const length = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    this.need(length, field);
    const start = this.offset;
    this.offset += length;
    if (isAscii(this.buf, start, this.offset)) return this.buf.toString('latin1', start, this.offset);
    try {
      return utf8.decode(this.buf.subarray(start, this.offset));
    } catch {
      throw new DecodeError(`${field}: not valid UTF-8`);
    }
  }

  /** `length` raw bytes as a view into the frame (no copy). */
  bytes(length: number, field: string): Buffer {
    this.need(length, field);
    const view = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return view;
  }
}

function isAscii(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i]! > 0x7f) return false;
  return true;
}

/** Fail a rule on a decoded value, naming the field: `partition: -1, expected >= 0`. */
export function fieldError(field: string, value: unknown, expected: string): DecodeError {
  return new DecodeError(`${field}: ${String(value)}, expected ${expected}`);
}

/**
 * A count of items that each take at least `bytesEach` bytes: capped by what is left of the frame
 * before anything is allocated for it, so a lying count is refused rather than trusted.
 */
export function readCount(reader: WireReader, field: string, bytesEach: number): number {
  const count = reader.int32(field);
  if (count < 0 || count * bytesEach > reader.remaining) {
    throw fieldError(field, count, `0..${Math.floor(reader.remaining / bytesEach)}`);
  }
  return count;
}

/** An offset a client will act on: it must be exact, so beyond 2^53 is refused rather than rounded. */
export function readOffset(reader: WireReader, field: string): number {
  const v = reader.int64(field);
  if (v < 0 || v > Number.MAX_SAFE_INTEGER) throw fieldError(field, v, '0..2^53-1');
  return v;
}
