import { fetchableRecordBytesMax, recordHeaderBytes } from '@booblik/protocol';
import { OffsetMismatchError, RecordTooLargeError } from '../errors.js';
import type { AppendBatch } from '../partition-log.js';
import type { Pending } from './types.js';

/**
 * A record whose header and payload exceed a whole segment can never be stored, and one beyond a
 * FETCH answer could never be read: the error refusing the batch, or null if it may be stored.
 */
export function findTooLarge(
  batch: AppendBatch,
  storedBytes: number,
  segmentBytesMax: number,
): RecordTooLargeError | null {
  const max = Math.min(segmentBytesMax, fetchableRecordBytesMax);
  if (storedBytes <= max) return null;
  let pos = 0;
  for (let i = 0; i < batch.count; i++) {
    const size = batch.records.readInt32BE(pos);
    if (recordHeaderBytes + size > max) return new RecordTooLargeError(i, size, max);
    pos += 4 + size;
  }
  return null;
}

/**
 * Refuses the batches whose expected offset is not where they would land (checked at write time, in
 * queue order: the only moment the answer is certain), and returns the rest.
 */
export function withoutMismatches(candidates: Pending[], logEndOffset: number): Pending[] {
  let end = logEndOffset;
  let kept: Pending[] | null = null;
  for (let i = 0; i < candidates.length; i++) {
    const p = candidates[i]!;
    const expected = p.batch.expectedOffset;
    if (expected !== undefined && expected >= 0 && expected !== end) {
      kept ??= candidates.slice(0, i);
      p.waiter.failed(new OffsetMismatchError(expected, end));
      continue;
    }
    end += p.batch.count;
    kept?.push(p);
  }
  return kept ?? candidates;
}
