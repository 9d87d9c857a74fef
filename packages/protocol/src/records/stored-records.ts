/**
 * Stored record => size:int32 crc32c:uint32 payload:bytes
 * The layout of segment files and of FETCH payloads alike, so a fetch sends file bytes as they are.
 * The write order inside a record makes a torn write detectable: a cut record fails the size or CRC check.
 */
import { crc32c } from '../crc32c/index.js';
import { recordHeaderBytes } from '../limits.js';
import { nativeAddon } from '../native/addon.js';

/** Bytes that `count` wire records (`int32 size, payload` each) take once stored. */
export function storedBytesOf(wireRecords: Buffer, count: number): number {
  return wireRecords.length + count * 4;
}

/**
 * Turns the validated wire records of a PRODUCE into stored records at target[at...], computing each
 * CRC-32C. When `positions` is given, the position in target of record i goes to
 * positions[positionsAt + i] (the log indexes records without reading them back). Returns the bytes written.
 */
export function writeStoredRecords(
  wireRecords: Buffer,
  count: number,
  target: Buffer,
  at: number,
  positions?: Uint32Array,
  positionsAt = 0,
): number {
  if (nativeAddon !== null) {
    // One native call for the whole batch: the CPU's CRC instruction, no per-record call cost.
    const view = positions === undefined || positionsAt === 0 ? positions : positions.subarray(positionsAt);
    return nativeAddon.storeRecords(wireRecords, count, target, at, view);
  }
  return writeStoredRecordsTs(wireRecords, count, target, at, positions, positionsAt);
}

/** The TypeScript reference of `writeStoredRecords`, used when the native module is not built. */
export function writeStoredRecordsTs(
  wireRecords: Buffer,
  count: number,
  target: Buffer,
  at: number,
  positions?: Uint32Array,
  positionsAt = 0,
): number {
  let from = 0;
  let to = at;
  for (let i = 0; i < count; i++) {
    if (positions !== undefined) positions[positionsAt + i] = to;
    const size = wireRecords.readInt32BE(from);
    const payloadStart = from + 4;
    const payloadEnd = payloadStart + size;
    target.writeInt32BE(size, to);
    target.writeUInt32BE(crc32c(wireRecords, payloadStart, payloadEnd), to + 4);
    wireRecords.copy(target, to + recordHeaderBytes, payloadStart, payloadEnd);
    from = payloadEnd;
    to += recordHeaderBytes + size;
  }
  return to - at;
}

/** Stored records for the given payloads (tests, fakes and tools). */
export function encodeStoredRecords(payloads: readonly Uint8Array[]): Buffer {
  let bytes = 0;
  for (const p of payloads) bytes += recordHeaderBytes + p.length;
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const p of payloads) {
    out.writeInt32BE(p.length, at);
    out.writeUInt32BE(crc32c(p), at + 4);
    out.set(p, at + recordHeaderBytes);
    at += recordHeaderBytes + p.length;
  }
  return out;
}
