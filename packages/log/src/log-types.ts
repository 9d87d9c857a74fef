import type { RemoteHistory } from './fragment.js';
import type { Logger } from './logger.js';
import type { ReadBufferPool } from './read-buffers.js';
import type { ScanStop } from './record-scan.js';
import type { SegmentScan } from './recovery.js';
import type { SegmentFile, SegmentFiles } from './segment-files.js';

/** One producer batch on its way into the log: the wire records of a PRODUCE, validated. */
export interface AppendBatch {
  /** `int32 size, payload` per record, as on the wire. */
  records: Buffer;
  count: number;
  /** When >= 0, the batch lands only at this offset; otherwise it is refused (OffsetMismatchError). */
  expectedOffset?: number;
}

/** What recovery found in one segment, for the startup summary. */
export interface RecoveryCut {
  segmentBaseOffset: number;
  /** Offset of the first record that was cut (the new log end of that segment). */
  offset: number;
  bytes: number;
  reason: ScanStop | 'after-earlier-cut';
}

export interface OpenReport {
  segments: number;
  bytes: number;
  logStartOffset: number;
  logEndOffset: number;
  cuts: RecoveryCut[];
  /** Milliseconds the scan took. */
  recoveryMs: number;
  /**
   * Where the store's history ended when the log found no record of its own and continued there (a
   * lost or emptied disk); null when the log opened on its own records, or new and empty.
   */
  restoredAt: number | null;
}

export interface ReadResult {
  highWatermark: number;
  /** Stored records from the requested offset, possibly cut inside the last one; views, not copies. */
  chunks: Buffer[];
  bytes: number;
  /**
   * When set, the chunks live in a pooled buffer: call once they are no longer needed (after the socket
   * write completes) so the next read reuses it. Not calling it only costs an allocation later.
   */
  release?: (() => void) | undefined;
}

/** One segment to scan at open: its descriptor stays open and owned by the log. */
export interface SegmentScanRequest {
  /** The file's descriptor, for a scan in another thread; -1 for a file without one (in memory). */
  fd: number;
  file: SegmentFile;
  fileBytes: number;
  baseOffset: number;
  indexIntervalBytes: number;
}

/** Scans a segment somewhere else than this thread (the result as `scanSegmentFile` gives it). */
export type SegmentScanner = (request: SegmentScanRequest) => Promise<SegmentScan>;

export interface LogOptions {
  logger?: Logger;
  /** Where reads from segment files borrow their buffers (one pool per process by default). */
  readBuffers?: ReadBufferPool;
  /** Milliseconds since the epoch; injected so retention by age is tested without waiting. */
  now?: () => number;
  /**
   * The partition's history in a store. The log then never removes a segment that is not persisted,
   * serves offsets below its local segments from the store, and an empty directory continues where
   * the store's history ends.
   */
  remote?: RemoteHistory;
  /**
   * Where the high watermark starts: a replica's last known commit offset (0 when it knows none).
   * Recovered records at and past it are kept but not readable until a publish covers them, and may
   * still be truncated; it is clamped to the local records. By default the log end: on a single node
   * every recovered record is readable.
   */
  highWatermark?: number;
  /**
   * Where the segment files live: the real file system by default. Tests hand in-memory files that
   * fail on purpose (a partition on them opens with `open`, whose scan reads through the files).
   */
  files?: SegmentFiles;
}
