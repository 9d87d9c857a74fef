import type { PartitionLog } from '../partition-log.js';
import { payloadsOf } from './records.js';

/** Every record from `from` to the high watermark, read the way a consumer would (CRC-checked). */
export async function readAll(
  log: Pick<PartitionLog, 'read' | 'highWatermark'>,
  from: number,
  maxBytes = 1 << 20,
) {
  const out: Buffer[] = [];
  let offset = from;
  while (offset < log.highWatermark.value) {
    const result = await log.read(offset, maxBytes);
    const records = payloadsOf(result.chunks, offset);
    if (records.length === 0) throw new Error(`no whole record at ${offset} with maxBytes ${maxBytes}`);
    out.push(...records);
    offset += records.length;
  }
  return out;
}
