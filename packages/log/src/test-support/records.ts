import { decodeFetchPayload } from '@booblik/protocol';
import type { AppendBatch } from '../partition-log.js';

/** A batch as a PRODUCE would carry it: `int32 size, payload` per record. */
export function batchOf(payloads: readonly Uint8Array[]): AppendBatch {
  let bytes = 0;
  for (const p of payloads) bytes += 4 + p.length;
  const records = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const p of payloads) {
    records.writeInt32BE(p.length, at);
    records.set(p, at + 4);
    at += 4 + p.length;
  }
  return { records, count: payloads.length };
}

/** Payloads of the whole records in read chunks, CRC-checked (a corrupt record throws). */
export function payloadsOf(chunks: Buffer[], fetchOffset: number): Buffer[] {
  const payload = Buffer.concat(chunks);
  return decodeFetchPayload(payload, { fetchOffset, maxBytes: Math.max(1, payload.length) }).records.map(
    (r) => Buffer.from(r),
  );
}

/** A payload that names itself: easy to tell apart in a failure message. */
export function rec(label: string | number, size?: number): Buffer {
  const text = Buffer.from(`record-${label}`);
  if (size === undefined || size <= text.length) return text;
  return Buffer.concat([text, Buffer.alloc(size - text.length, 0x2e)]);
}
