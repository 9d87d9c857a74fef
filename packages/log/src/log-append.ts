import { StorageError } from './errors.js';
import { planRuns, type Run } from './log-roll.js';
import { activeSegment, type LogState } from './log-state.js';
import type { Segment } from './segment.js';
import { pwriteFully } from './segment-files.js';

/** The positions of a one-record group (it starts its buffer), shared rather than copied per group. */
const LONE_RECORD_POSITIONS = new Uint32Array(1);

/**
 * The one write path of primary and replica: `buffer` holds `count` framed records at `positions`.
 * One write per segment touched (a roll splits it); all or nothing: if the disk refuses any part,
 * every byte of the group is cut off again and StorageError is thrown. Unpublished until `publish`.
 */
export function writeStored(log: LogState, buffer: Buffer, positions: Uint32Array, count: number): void {
  const firstOffset = activeSegment(log).nextOffset;
  const touched = writeRuns(log, buffer, positions, count);
  log.unpublished.push({
    startOffset: firstOffset,
    chunk: {
      startOffset: firstOffset,
      count,
      buffer,
      positions: count === 1 ? LONE_RECORD_POSITIONS : positions.slice(0, count),
    },
    endOffset: firstOffset + count,
    segmentEnds: touched.map((s) => [s, s.sizeBytes]),
  });
}

/**
 * Splits the group where the active segment would pass its capacity, then writes each run.
 * Returns the segments written to.
 */
function writeRuns(log: LogState, buffer: Buffer, positions: Uint32Array, count: number): Segment[] {
  const first = activeSegment(log);
  const firstSizeBefore = first.sizeBytes;
  if (buffer.length <= log.config.segmentBytesMax - firstSizeBefore) {
    // Nearly every group: it fits the active segment, one write and nothing to plan.
    try {
      pwriteFully(first.file, buffer, firstSizeBefore);
    } catch (error) {
      undoRuns(log, first, firstSizeBefore, []);
      throw writeRefused(log, error);
    }
    noteRun(log, first, positions, 0, count, log.now());
    return [first];
  }
  const created: Segment[] = [];
  let runs: Run[];
  try {
    runs = planRuns(log.files, first, positions, count, log.config, log.now, created);
    for (const run of runs) {
      pwriteFully(run.segment.file, buffer.subarray(run.from, run.to), run.segment.sizeBytes);
    }
  } catch (error) {
    undoRuns(log, first, firstSizeBefore, created);
    throw writeRefused(log, error);
  }
  const now = log.now();
  for (const run of runs) noteRun(log, run.segment, positions, run.firstRecord, run.records, now);
  for (const s of created) log.segments.append(s);
  if (created.length > 0) log.dirUnsynced = true;
  return runs.map((r) => r.segment);
}

/** Records a run just written to `s`: offsets, size, the sparse index, and that it needs a sync. */
function noteRun(
  log: LogState,
  s: Segment,
  positions: Uint32Array,
  firstRecord: number,
  records: number,
  now: number,
): void {
  for (let i = firstRecord; i < firstRecord + records; i++) {
    s.index.noteRecord(s.nextOffset, s.sizeBytes, positions[i + 1]! - positions[i]!);
    s.nextOffset++;
    s.sizeBytes += positions[i + 1]! - positions[i]!;
  }
  s.lastWriteMs = now;
  log.unsynced.add(s);
}

function writeRefused(log: LogState, error: unknown): StorageError {
  const code = (error as NodeJS.ErrnoException).code;
  return new StorageError(`${log.name}: write refused by the disk (${code ?? String(error)})`, code, {
    cause: error,
  });
}

/** Takes a failed group back out: the first segment cut to its old size, new segments deleted. */
function undoRuns(log: LogState, first: Segment, sizeBefore: number, created: Segment[]): void {
  try {
    first.file.truncate(sizeBefore);
  } catch (error) {
    log.logger.error(`${log.name}: could not cut a failed write back off: ${String(error)}`);
  }
  for (const s of created) {
    try {
      s.remove();
    } catch (error) {
      log.logger.error(`${log.name}: could not remove segment ${s.path}: ${String(error)}`);
    }
  }
}

/**
 * fdatasync every segment written since the last sync, and fsync the directory if a segment was
 * created: after this, those records survive a crash.
 */
export async function syncLog(log: LogState): Promise<void> {
  const segments = [...log.unsynced].filter((s) => !s.isRemoved);
  log.unsynced.clear();
  if (log.dirUnsynced) startDirSync(log);
  // A sync that finds a directory fsync under way waits for it too: a segment it covers may hold
  // records this sync is asked to make durable.
  const dirSynced = log.dirSyncing;
  // Each file is held open for its sync, as a read holds it: retention may remove the segment while
  // the fdatasync waits for a thread, and closing the descriptor under it failed the sync with EBADF,
  // refusing FORCED batches that were already in the log (found by the reliability suite).
  for (const s of segments) s.acquire();
  try {
    await Promise.all([dirSynced, ...segments.map((s) => s.file.fdatasync())]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new StorageError(`${log.name}: fdatasync failed (${code ?? String(error)})`, code, {
      cause: error,
    });
  } finally {
    for (const s of segments) s.release();
  }
}

function startDirSync(log: LogState): void {
  log.dirUnsynced = false;
  const syncing = log.files.fsyncDirAsync(log.dir).catch((error: unknown) => {
    log.dirUnsynced = true; // not known to be durable: the next sync tries again
    throw error;
  });
  log.dirSyncing = syncing;
  const done = () => {
    if (log.dirSyncing === syncing) log.dirSyncing = undefined;
  };
  syncing.then(done, done);
}

/** Makes the oldest unpublished group readable; returns its end offset. */
export function publishOldest(log: LogState): number {
  const group = log.unpublished.shift()!;
  for (const [segment, size] of group.segmentEnds) {
    segment.visibleBytes = size;
    segment.visibleEndOffset = Math.min(group.endOffset, segment.nextOffset);
  }
  if (group.chunk !== null) log.tail.add(group.chunk);
  return group.endOffset;
}
