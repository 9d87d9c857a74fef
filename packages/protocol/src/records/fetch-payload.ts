import { crc32c } from '../crc32c/index.js';
import { CorruptRecordError } from '../errors.js';
import { recordHeaderBytes } from '../limits.js';
import { nativeAddon } from '../native/addon.js';

export interface FetchPayloadOptions {
  /** Offset of the first record in the payload (the request's fetchOffset). */
  fetchOffset: number;
  /** The request's maxBytes: a cut record that could never fit it is reported, not retried. */
  maxBytes: number;
  /** Verify each record's CRC-32C (default true). Only a caller that verifies elsewhere turns it off. */
  verifyCrc?: boolean;
}

export interface DecodedFetchPayload {
  /** Payloads of the whole records, in order: views into the response (no copy). */
  records: Buffer[];
  /** Where the next fetch starts: fetchOffset + records.length. Whole records only. */
  nextOffset: number;
  /** Bytes of a record cut off at the end, dropped here and asked for again on the next fetch. */
  truncatedBytes: number;
  /** The cut record's payload size from its header, or -1 when its size field did not arrive. */
  truncatedRecordBytes: number;
  /**
   * No whole record arrived and the next one can never fit in maxBytes: fetching again would stall
   * forever while looking exactly like a caught-up consumer.
   */
  recordExceedsMaxBytes: boolean;
}

/**
 * Where each whole record of a FETCH payload lies, without a view per record: record i's payload is
 * `payload.subarray(bounds[i] + recordHeaderBytes, bounds[i + 1])`. A reader that hands records out
 * one at a time makes each view as it goes, so a 1 MiB fetch of small records does not keep thousands
 * of views alive at once (they outlive young-generation collections and make full ones frequent).
 */
export interface FetchPayloadIndex extends Omit<DecodedFetchPayload, 'records'> {
  /** Whole records in the payload. */
  count: number;
  /**
   * count + 1 positions: where each record's header starts, then where the whole records end. Made
   * on first use: a reader that walks the records in order needs only `count` and the sizes.
   */
  readonly bounds: number[];
}

/**
 * Finds the whole records of a FETCH payload, checking each as it goes. The payload may be cut at any
 * byte (inside a record or its header): the cut tail is dropped, never returned. Throws
 * CorruptRecordError on a CRC mismatch or an impossible size: a corrupt record is never handed out.
 */
export function indexFetchPayload(payload: Buffer, options: FetchPayloadOptions): FetchPayloadIndex {
  const verify = options.verifyCrc ?? true;
  const end = payload.length;
  let count = 0;
  let pos = 0;
  // With the native module, one call checks every whole record's CRC and counts them; the walk below
  // then only looks at what follows (a cut record, or a bad one it reports in detail).
  if (verify && nativeAddon !== null) {
    const [validBytes, records] = nativeAddon.scanRecords(payload, 0, end);
    count = records;
    pos = validBytes;
  }
  let truncatedRecordBytes = -1;
  while (pos < end) {
    const offset = options.fetchOffset + count;
    if (end - pos < 4) break; // not even the size arrived
    const size = payload.readInt32BE(pos);
    if (size <= 0) throw new CorruptRecordError(offset, `size ${size} in its header, expected > 0`);
    if (end - pos < recordHeaderBytes + size) {
      truncatedRecordBytes = size;
      break;
    }
    const start = pos + recordHeaderBytes;
    if (verify) {
      const stored = payload.readUInt32BE(pos + 4);
      const computed = crc32c(payload, start, start + size);
      if (stored !== computed) {
        throw new CorruptRecordError(
          offset,
          `stored crc32c 0x${hex32(stored)}, computed 0x${hex32(computed)}`,
          stored,
          computed,
        );
      }
    }
    pos = start + size;
    count++;
  }
  const truncatedBytes = end - pos;
  const recordExceedsMaxBytes =
    count === 0 &&
    truncatedBytes > 0 &&
    (truncatedRecordBytes >= 0
      ? recordHeaderBytes + truncatedRecordBytes > options.maxBytes
      : truncatedBytes >= options.maxBytes);
  let bounds: number[] | undefined;
  return {
    count,
    get bounds(): number[] {
      bounds ??= recordBounds(payload, count);
      return bounds;
    },
    nextOffset: options.fetchOffset + count,
    truncatedBytes,
    truncatedRecordBytes,
    recordExceedsMaxBytes,
  };
}

/** Where each of the first `count` records starts, then where they end (sizes already checked). */
function recordBounds(payload: Buffer, count: number): number[] {
  const bounds = new Array<number>(count + 1);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    bounds[i] = pos;
    pos += recordHeaderBytes + payload.readInt32BE(pos);
  }
  bounds[count] = pos;
  return bounds;
}

/** Splits a FETCH payload into whole records (views, no copy), checked as indexFetchPayload does. */
export function decodeFetchPayload(payload: Buffer, options: FetchPayloadOptions): DecodedFetchPayload {
  const { count, bounds, ...rest } = indexFetchPayload(payload, options);
  const records = new Array<Buffer>(count);
  for (let i = 0; i < count; i++) {
    records[i] = payload.subarray(bounds[i]! + recordHeaderBytes, bounds[i + 1]);
  }
  return { records, ...rest };
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, '0');
}
