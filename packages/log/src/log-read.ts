import { LogClosedError, OffsetOutOfRangeError } from './errors.js';
import { type LogState, logEndOf } from './log-state.js';
import type { ReadResult } from './log-types.js';
import { readFromSegment, type SegmentRead } from './segment-read.js';

/** The oldest offset readable, from the store when it holds older history than the disk. */
export function logStartOf(log: LogState): number {
  return log.remote.length > 0 ? log.remote[0]!.baseOffset : log.segments[0]!.baseOffset;
}

/**
 * Up to `maxBytes` of stored records from `offset`, as file bytes, without parsing a record: from the
 * in-memory tail when it holds `offset`, else from the segment (a sparse-index lookup, then a hop
 * over record headers to the exact position). Stops at a segment's end.
 */
export async function readPublished(log: LogState, offset: number, maxBytes: number): Promise<ReadResult> {
  if (log.isClosed) throw new LogClosedError(log.name);
  const now = readNow(log, offset, maxBytes);
  if (now !== null) return now;
  const highWatermark = log.highWatermark.value;
  if (offset < log.segments[0]!.baseOffset) {
    if (log.isClosed) throw new LogClosedError(log.name);
    const bytes = await floorByBase(log.remote, offset).read(offset, maxBytes);
    return { highWatermark, chunks: bytes.length > 0 ? [bytes] : [], bytes: bytes.length };
  }
  const read = await readLocal(log, offset, maxBytes, false);
  if (read.bytes.length === 0) read.release?.();
  return {
    highWatermark,
    chunks: read.bytes.length > 0 ? [read.bytes] : [],
    bytes: read.bytes.length,
    release: read.release,
  };
}

/** From the segment holding `offset`: its published bytes, or all it holds (`written`). */
async function readLocal(
  log: LogState,
  offset: number,
  maxBytes: number,
  written: boolean,
): Promise<SegmentRead> {
  const segment = floorByBase(log.segments, offset);
  segment.acquire();
  try {
    return await readFromSegment(
      segment,
      offset,
      maxBytes,
      log.config.indexIntervalBytes,
      log.readBuffers,
      written ? segment.sizeBytes : segment.visibleBytes,
    );
  } finally {
    segment.release();
  }
}

/**
 * Stored records from `offset` as written, published or not: a primary copying to a replica what
 * it lacks, records not committed yet included. Up to `maxBytes`, maybe cut inside the last record;
 * a copy the caller keeps (it waits for the replica's answer).
 */
export async function readWritten(log: LogState, offset: number, maxBytes: number): Promise<Buffer> {
  if (log.isClosed) throw new LogClosedError(log.name);
  const end = logEndOf(log);
  const localStart = log.segments[0]!.baseOffset;
  if (offset < localStart || offset > end) {
    throw new OffsetOutOfRangeError(offset, localStart, end);
  }
  if (offset === end) return Buffer.alloc(0);
  const read = await readLocal(log, offset, maxBytes, true);
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

/** The segment holding `offset` in a list sorted by base offset (the first when none starts before it). */
function floorByBase<T extends { baseOffset: number }>(list: readonly T[], offset: number): T {
  let lo = 0;
  let hi = list.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (list[mid]!.baseOffset <= offset) lo = mid;
    else hi = mid - 1;
  }
  return list[lo]!;
}

function sumLengths(chunks: Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}
