/** Storage settings of one partition, with the defaults the broker starts with (why: limits.ts). */
import {
  DEFAULT_FLUSH_EVERY_MS,
  DEFAULT_FLUSH_EVERY_RECORDS,
  DEFAULT_INDEX_INTERVAL_BYTES,
  DEFAULT_LOCAL_RETENTION_BYTES,
  DEFAULT_LOCAL_RETENTION_MS,
  DEFAULT_RETENTION_BYTES,
  DEFAULT_RETENTION_MS,
  DEFAULT_SEGMENT_MAX_BYTES,
  DEFAULT_TAIL_CACHE_BYTES,
  DEFAULT_WRITER_QUEUE_MAX_BYTES,
} from './limits.js';

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

/** The former names of the defaults in limits.ts, kept for code that imports them. */
export {
  DEFAULT_INDEX_INTERVAL_BYTES,
  DEFAULT_SEGMENT_MAX_BYTES as DEFAULT_SEGMENT_BYTES_MAX,
  DEFAULT_TAIL_CACHE_BYTES,
  DEFAULT_WRITER_QUEUE_MAX_BYTES as DEFAULT_WRITER_QUEUE_BYTES_MAX,
  SEGMENT_LIMIT_BYTES as SEGMENT_BYTES_LIMIT,
  SEGMENT_MIN_BYTES as SEGMENT_BYTES_MIN,
} from './limits.js';

export const defaultLogConfig: Readonly<LogConfig> = {
  segmentBytesMax: DEFAULT_SEGMENT_MAX_BYTES,
  indexIntervalBytes: DEFAULT_INDEX_INTERVAL_BYTES,
  flushEveryRecords: DEFAULT_FLUSH_EVERY_RECORDS,
  flushEveryMs: DEFAULT_FLUSH_EVERY_MS,
  retentionBytes: DEFAULT_RETENTION_BYTES,
  retentionMs: DEFAULT_RETENTION_MS,
  localRetentionBytes: DEFAULT_LOCAL_RETENTION_BYTES,
  localRetentionMs: DEFAULT_LOCAL_RETENTION_MS,
  writerQueueBytesMax: DEFAULT_WRITER_QUEUE_MAX_BYTES,
  tailCacheBytes: DEFAULT_TAIL_CACHE_BYTES,
};
