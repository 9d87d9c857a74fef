import type { LogConfig } from './config.js';
import type { Fragment, FragmentSource } from './fragment.js';
import type { HighWatermark } from './high-watermark.js';
import type { Logger } from './logger.js';
import type { ReadBufferPool } from './read-buffers.js';
import type { Segment } from './segment.js';
import type { SegmentFiles } from './segment-files.js';
import type { SegmentSet } from './segment-set.js';
import type { TailCache, TailChunk } from './tail-cache.js';

/**
 * A group written but not yet readable, with where it left each segment it touched. A recovered tail
 * held back at open (see `LogOptions.highWatermark`) is one such group without a chunk: its bytes are
 * read from the files.
 */
export interface UnpublishedGroup {
  startOffset: number;
  endOffset: number;
  chunk: TailChunk | null;
  segmentEnds: [Segment, number][];
}

/**
 * What one partition's log holds, shared by the files that each do one job on it (append, read,
 * retention, persistence). `PartitionLog` owns it and is the only face others see.
 */
export interface LogState {
  readonly dir: string;
  readonly name: string;
  /** Where segment files live: the real file system, or in-memory files in tests. */
  readonly files: SegmentFiles;
  config: Readonly<LogConfig>;
  /** Every segment of the history, oldest first: store-only ones, then local ones, the active last. */
  readonly segments: SegmentSet;
  readonly highWatermark: HighWatermark;
  readonly tail: TailCache;
  readonly readBuffers: ReadBufferPool;
  readonly logger: Logger;
  readonly now: () => number;
  /** The store's bytes, when the partition has one. */
  readonly source: FragmentSource | undefined;
  /** Segments written since the last `sync`. */
  readonly unsynced: Set<Segment>;
  /**
   * A segment was created since the last directory fsync began. A new segment's name is durable
   * only once the directory is synced; the roll leaves that to the next `sync` (the barrier a FORCED
   * group waits for), so it costs the write path no fsync.
   */
  dirUnsynced: boolean;
  /** The directory fsync under way: every `sync` waits for it, whichever started it. */
  dirSyncing: Promise<void> | undefined;
  /** Groups written but not yet published, in order, with where each left the segments it touched. */
  unpublished: UnpublishedGroup[];
  /** Fragments retention dropped from the log: their objects are to be deleted from the store. */
  expired: Fragment[];
  /** Closed or removed: reads are refused rather than touching a closed descriptor. */
  isClosed: boolean;
}

/** The segment new records go to. */
export function activeSegment(log: LogState): Segment {
  return log.segments.active;
}

/** The offset the next record will get. */
export function logEndOf(log: LogState): number {
  return activeSegment(log).nextOffset;
}
