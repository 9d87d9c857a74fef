import path from 'node:path';
import { LogClosedError } from './errors.js';
import type { Fragment } from './fragment.js';
import type { SegmentFile } from './segment-files.js';
import { segmentFileName } from './segment-name.js';
import { readFromSegment } from './segment-read.js';
import type { SparseIndex } from './sparse-index.js';
import type { SegmentBytes, SegmentReadOptions, StoredSegment } from './stored-segment.js';

/**
 * One segment file: records from `baseOffset`, appended at `sizeBytes`. The file stays open while any
 * read holds it, so retention can remove a segment under a read and the read still completes (the
 * file is unlinked at once and its descriptor closed when the last reader lets go).
 */
export class Segment implements StoredSegment {
  readonly isLocal = true as const;
  /** Offset the next record appended here will get. */
  nextOffset: number;
  /** Bytes of whole records in the file; the next append goes here. */
  sizeBytes: number;
  /** Bytes a reader may see: records up to the published high watermark. */
  visibleBytes: number;
  /** The offset `visibleBytes` ends at: never past the high watermark (an invariant reads check). */
  visibleEndOffset: number;
  /** When a record was last appended (file mtime for a recovered segment): retention by age. */
  lastWriteMs: number;
  /** Set once the segment (closed) is in the store: only then may local retention remove it. */
  fragment: Fragment | undefined;
  private readers = 0;
  private removed = false;
  private closed = false;

  constructor(
    readonly dir: string,
    readonly baseOffset: number,
    readonly file: SegmentFile,
    readonly index: SparseIndex,
    state: { records: number; sizeBytes: number; lastWriteMs: number },
  ) {
    this.nextOffset = baseOffset + state.records;
    this.sizeBytes = state.sizeBytes;
    this.visibleBytes = state.sizeBytes;
    this.visibleEndOffset = this.nextOffset;
    this.lastWriteMs = state.lastWriteMs;
  }

  get path(): string {
    return path.join(this.dir, segmentFileName(this.baseOffset));
  }

  get records(): number {
    return this.nextOffset - this.baseOffset;
  }

  get isRemoved(): boolean {
    return this.removed;
  }

  /**
   * Holds the file open for a read; pair with `release`. A read of a closed segment (the partition
   * closed under it) is LogClosedError, which the broker answers with a code, not a dropped connection.
   */
  acquire(): void {
    if (this.closed) throw new LogClosedError(path.basename(this.dir));
    this.readers++;
  }

  release(): void {
    this.readers--;
    if (this.readers < 0) throw new Error(`segment ${this.path}: released more often than acquired`);
    if (this.readers === 0 && this.removed) this.closeFile();
  }

  /**
   * Up to `maxBytes` from `offset`: its published bytes, or all it holds (`written`). The file is held
   * open for the read, so a removal under it lets the read complete.
   */
  async read(offset: number, maxBytes: number, options: SegmentReadOptions): Promise<SegmentBytes> {
    this.acquire();
    try {
      return await readFromSegment(
        this,
        offset,
        maxBytes,
        options.indexIntervalBytes,
        options.pool,
        options.written ? this.sizeBytes : this.visibleBytes,
      );
    } finally {
      this.release();
    }
  }

  /** Unlinks the file now; closes it once no read holds it. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    this.file.unlink();
    if (this.readers === 0) this.closeFile();
  }

  /** Closes the file (at shutdown, after reads have ended). */
  close(): void {
    if (!this.closed) this.closeFile();
  }

  private closeFile(): void {
    this.closed = true;
    this.file.close();
  }
}
