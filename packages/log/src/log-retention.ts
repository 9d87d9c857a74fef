import { invariant } from '@booblik/protocol';
import { LogClosedError, StorageError, TruncationRefusedError } from './errors.js';
import { logStartOf } from './log-read.js';
import { activeSegment, type LogState, logEndOf } from './log-state.js';
import { truncateSegment } from './recovery.js';
import { RemoteSegment } from './remote-segment.js';
import { expiredPrefix } from './retention.js';
import type { Segment } from './segment.js';
import { positionOfOffset } from './segment-read.js';

/**
 * Removes whole oldest segments (never the active one, nor one holding records not yet published)
 * while the partition holds more than retentionBytes, or while the oldest was last written longer
 * than retentionMs ago. Returns the removed segments' base offsets (see `PartitionLog.enforceRetention`).
 */
export function enforceRetention(log: LogState, nowMs: number): number[] {
  const { retentionBytes, retentionMs } = log.config;
  const limits = { bytes: retentionBytes, ms: retentionMs };
  const removed: number[] = [];
  const hasStore = log.source !== undefined;
  const active = activeSegment(log);
  // Only records already readable may go. A segment holding records written but not yet
  // published (a FORCED group waiting for its fdatasync, rolled into a new segment) stays: removing
  // it deleted records before any consumer could read them and put logStartOffset past the high
  // watermark, so every FETCH was out of range (found by the reliability suite's retention check).
  const mayGoLocally = (s: Segment) =>
    s !== active && s.nextOffset <= log.highWatermark.value && (!hasStore || s.fragment !== undefined);

  const history = log.segments.all();
  const gone = expiredPrefix(
    history,
    log.segments.storeOnlyBytes() + log.segments.localBytes(),
    limits,
    nowMs,
    (i) => {
      const s = history[i]!;
      return !s.isLocal || mayGoLocally(s);
    },
  );
  for (let i = 0; i < gone; i++) {
    const s = log.segments.dropHead();
    if (s.isLocal) log.unsynced.delete(s);
    s.remove();
    if (s.fragment !== undefined) log.expired.push(s.fragment);
    removed.push(s.baseOffset);
  }

  if (hasStore) {
    const { localRetentionBytes, localRetentionMs } = log.config;
    const local = log.segments.local();
    const drop = expiredPrefix(
      local,
      log.segments.localBytes(),
      { bytes: localRetentionBytes, ms: localRetentionMs },
      nowMs,
      (i) => mayGoLocally(local[i]!),
    );
    for (let i = 0; i < drop; i++) {
      const s = local[i]!;
      log.segments.replaceFirstLocal(new RemoteSegment(s.fragment!, log.source!));
      log.unsynced.delete(s);
      s.remove();
      removed.push(s.baseOffset);
    }
  }
  if (removed.length > 0) {
    checkStart(log);
    log.files.fsyncDir(log.dir);
    const localStart = log.segments.firstLocal.baseOffset;
    log.tail.dropBefore(localStart);
    log.logger.info(
      `${log.name}: retention removed ${removed.length} segment(s); log start is now ${logStartOf(log)}` +
        (hasStore ? `, local start ${localStart}` : ''),
    );
  }
  return removed;
}

/** The start offset never passes the readable end: what is retained is still there to read. */
function checkStart(log: LogState): void {
  const start = logStartOf(log);
  const highWatermark = log.highWatermark.value;
  invariant(
    start <= highWatermark,
    () => `${log.name}: retention moved the log start to ${start}, past the high watermark ${highWatermark}`,
  );
}

/** Removes every record at or above `offset` (see `PartitionLog.truncateTo`). */
export function truncateTo(log: LogState, offset: number): void {
  if (log.isClosed) throw new LogClosedError(log.name);
  const highWatermark = log.highWatermark.value;
  const logEndOffset = logEndOf(log);
  if (!Number.isInteger(offset) || offset < highWatermark || offset > logEndOffset) {
    throw new TruncationRefusedError(
      offset,
      `truncateTo: offset ${offset}, expected ${highWatermark}..${logEndOffset} ` +
        '(from the high watermark, below which a reader may have seen a record, to the log end)',
    );
  }
  const localStart = log.segments.firstLocal.baseOffset;
  if (offset < localStart) {
    throw new TruncationRefusedError(
      offset,
      `truncateTo: offset ${offset} is below the local start ${localStart} (history only in the store)`,
    );
  }
  if (offset === logEndOffset) return;
  // Segments starting at or after `offset` go whole; the first segment always stays (cut to empty).
  const local = log.segments.local();
  let keep = local.findIndex((s) => s.baseOffset >= offset);
  if (keep < 0) keep = local.length;
  if (keep === 0) keep = 1;
  const cut = local[keep - 1]!;
  const removed = local.slice(keep);
  try {
    if (cut.nextOffset > offset) {
      const position = positionOfOffset(cut, offset);
      truncateSegment(cut.file, position);
      cut.nextOffset = offset;
      cut.sizeBytes = position;
      cut.visibleBytes = Math.min(cut.visibleBytes, position);
      cut.visibleEndOffset = Math.min(cut.visibleEndOffset, offset);
      cut.index.truncateTo(offset, position);
    }
    log.segments.truncateLocal(keep);
    for (const s of removed) {
      log.unsynced.delete(s);
      s.remove();
    }
    if (removed.length > 0) log.files.fsyncDir(log.dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new StorageError(`${log.name}: truncation refused by the disk (${code ?? String(error)})`, code, {
      cause: error,
    });
  }
  // Published records all lie below the high watermark, so the tail cache holds none past `offset`;
  // only groups not yet published can reach past it.
  log.unpublished = log.unpublished.filter((g) => g.startOffset < offset);
  for (const g of log.unpublished) {
    if (g.endOffset > offset) {
      const count = offset - g.startOffset;
      if (g.chunk !== null) {
        g.chunk = {
          startOffset: g.startOffset,
          count,
          buffer: g.chunk.buffer.subarray(0, g.chunk.positions[count]),
          positions: g.chunk.positions.subarray(0, count),
        };
      }
      g.endOffset = offset;
    }
    g.segmentEnds = g.segmentEnds
      .filter(([s]) => !s.isRemoved)
      .map(([s, size]): [Segment, number] => [s, Math.min(size, s.sizeBytes)]);
  }
  log.logger.info(
    `${log.name}: truncated to offset ${offset} (was ${logEndOffset}; ${removed.length} segment(s) removed)`,
  );
}
