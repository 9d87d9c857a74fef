/** Storage settings of one partition, with the defaults the broker starts with and why. */

export interface LogConfig {
  /** A new segment starts when the active one would pass this size. */
  segmentBytesMax: number;
  /** One sparse-index entry per this many bytes (and always the first record of a segment). */
  indexIntervalBytes: number;
  /** fdatasync after this many records written since the last one (0: never by count). */
  flushEveryRecords: number;
  /** fdatasync this often when anything was written since the last one (0: never by time). */
  flushEveryMs: number;
  /** Remove whole oldest segments while the partition holds more than this (-1: unlimited). */
  retentionBytes: number;
  /** Remove whole oldest segments last written longer ago than this (-1: unlimited). */
  retentionMs: number;
  /**
   * With a store: local copies of persisted segments go while the partition's local segments hold
   * more than this (-1: unlimited); the segments stay readable from the store.
   */
  localRetentionBytes: number;
  /** With a store: local copies of persisted segments last written longer ago than this go (-1: unlimited). */
  localRetentionMs: number;
  /** Bytes the writer queue may hold before producers wait (backpressure, never unbounded memory). */
  writerQueueBytesMax: number;
  /** Bytes of the active segment's tail kept in memory, so caught-up consumers never touch the disk. */
  tailCacheBytes: number;
}

/** Large segments keep the file count low; 512 MiB is the original broker's default too. */
export const DEFAULT_SEGMENT_BYTES_MAX = 512 * 1024 * 1024;
/** One index entry per page: a lookup then reads at most ~4 KiB of headers to find an offset. */
export const DEFAULT_INDEX_INTERVAL_BYTES = 4096;
/**
 * 64 MiB of queued stored bytes per partition: several seconds of the fastest producer at the disk's
 * page-cache rate, yet a small fraction of memory.
 */
export const DEFAULT_WRITER_QUEUE_BYTES_MAX = 64 * 1024 * 1024;
/** 8 MiB: a few hundred milliseconds of writes at full speed, enough for every consumer that keeps up. */
export const DEFAULT_TAIL_CACHE_BYTES = 8 * 1024 * 1024;

export const defaultLogConfig: Readonly<LogConfig> = {
  segmentBytesMax: DEFAULT_SEGMENT_BYTES_MAX,
  indexIntervalBytes: DEFAULT_INDEX_INTERVAL_BYTES,
  flushEveryRecords: 0,
  flushEveryMs: 0,
  retentionBytes: -1,
  retentionMs: -1,
  localRetentionBytes: -1,
  localRetentionMs: -1,
  writerQueueBytesMax: DEFAULT_WRITER_QUEUE_BYTES_MAX,
  tailCacheBytes: DEFAULT_TAIL_CACHE_BYTES,
};

/** Smallest segment: one record of one byte (8-byte header + 1). Tests use tiny segments to hit boundaries. */
export const SEGMENT_BYTES_MIN = 9;
/** Segment positions are kept as uint32 in the index; 2 GiB keeps every position well inside it. */
export const SEGMENT_BYTES_LIMIT = 2 ** 31 - 1;
