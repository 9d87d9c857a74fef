import type { Fragment } from './fragment.js';
import type { ReadBufferPool } from './read-buffers.js';

/** How a segment read is made: where buffers come from, and whether unpublished bytes count. */
export interface SegmentReadOptions {
  indexIntervalBytes: number;
  pool: ReadBufferPool;
  /** Read everything written (a primary copying to a replica), not only the published bytes. */
  written: boolean;
}

/** Bytes read from a segment, with the pooled buffer's hand-back when there is one. */
export interface SegmentBytes {
  bytes: Buffer;
  release: (() => void) | undefined;
}

/** What every segment of a partition's history is, whether its bytes are in a local file or a store. */
export interface StoredSegment {
  readonly baseOffset: number;
  /** One past its last offset. */
  readonly nextOffset: number;
  readonly sizeBytes: number;
  /** When its last record was written: retention by age. */
  readonly lastWriteMs: number;
  /** Its copy in the store, when it has one. */
  readonly fragment: Fragment | undefined;
  /** Its bytes are in a local file (which may also be in the store). */
  readonly isLocal: boolean;
  /** Up to `maxBytes` of stored records from `offset`, possibly cut inside the last one. */
  read(offset: number, maxBytes: number, options: SegmentReadOptions): Promise<SegmentBytes>;
  /** Lets go of the segment's resources (at shutdown). */
  close(): void;
  /** Removes its local bytes (a store's object is deleted by whoever owns the store). */
  remove(): void;
}
