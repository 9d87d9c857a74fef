import { invariant } from '@booblik/protocol';
import { LogClosedError, OffsetOutOfRangeError } from './errors.js';
import { type LogState, logEndOf } from './log-state.js';
import type { ReadResult } from './log-types.js';
import type { SegmentReadOptions } from './stored-segment.js';

/** The oldest offset readable, from the store when it holds older history than the disk. */
export function logStartOf(log: LogState): number {
  return log.segments.first.baseOffset;
}

/**
 * Up to `maxBytes` of stored records from `offset`, as file bytes, without parsing a record: from the
 * in-memory tail when it holds `offset`, else from the segment holding it, local or in the store.
 * Stops at a segment's end.
 */
export async function readPublished(log: LogState, offset: number, maxBytes: number): Promise<ReadResult> {
  if (log.isClosed) throw new LogClosedError(log.name);
  const now = readNow(log, offset, maxBytes);
  if (now !== null) return now;
  const highWatermark = log.highWatermark.value;
  const segment = log.segments.find(offset);
  if (segment.isLocal) {
    const visibleEnd = segment.visibleEndOffset;
    invariant(
      visibleEnd <= highWatermark,
      () =>
        `${log.name}: a read of offset ${offset} would see records up to ${visibleEnd}, past the ` +
        `high watermark ${highWatermark}`,
    );
  }
  const read = await segment.read(offset, maxBytes, readOptions(log, false));
  if (read.bytes.length === 0) read.release?.();
  const result: ReadResult = {
    highWatermark,
    chunks: read.bytes.length > 0 ? [read.bytes] : [],
    bytes: read.bytes.length,
  };
  // A file read's answer has always named its buffer's hand-back, even when there is none.
  if (segment.isLocal) result.release = read.release;
  return result;
}

function readOptions(log: LogState, written: boolean): SegmentReadOptions {
  return { indexIntervalBytes: log.config.indexIntervalBytes, pool: log.readBuffers, written };
}

/**
 * Stored records from `offset` as written, published or not: a primary copying to a replica what
 * it lacks, records not committed yet included. Up to `maxBytes`, maybe cut inside the last record;
 * a copy the caller keeps (it waits for the replica's answer).
 */
export async function readWritten(log: LogState, offset: number, maxBytes: number): Promise<Buffer> {
  if (log.isClosed) throw new LogClosedError(log.name);
  const end = logEndOf(log);
  const localStart = log.segments.firstLocal.baseOffset;
  if (offset < localStart || offset > end) {
    throw new OffsetOutOfRangeError(offset, localStart, end);
  }
  if (offset === end) return Buffer.alloc(0);
  const read = await log.segments.findLocal(offset).read(offset, maxBytes, readOptions(log, true));
  const copy = Buffer.from(read.bytes);
  read.release?.();
  return copy;
}

/**
 * `read` when it needs no disk: out of range (thrown), at the high watermark (empty), or from the
 * in-memory tail. Null when the records must be read from a segment file. A caught-up consumer
 * woken by a write is answered from here in the same turn, without a promise step.
 */
export function readNow(log: LogState, offset: number, maxBytes: number): ReadResult | null {
  if (log.isClosed) throw new LogClosedError(log.name);
  const highWatermark = log.highWatermark.value;
  const start = logStartOf(log);
  if (offset < start || offset > highWatermark) {
    throw new OffsetOutOfRangeError(offset, start, highWatermark);
  }
  if (offset === highWatermark) return { highWatermark, chunks: [], bytes: 0 };
  const cached = log.tail.read(offset, maxBytes);
  if (cached !== null) return { highWatermark, chunks: cached, bytes: sumLengths(cached) };
  return null;
}

function sumLengths(chunks: Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}
