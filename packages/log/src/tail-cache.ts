/**
 * The newest published records of a partition, kept in memory as the buffers they were written from,
 * so a consumer that keeps up is served without a disk read and without a copy.
 */

export interface TailChunk {
  /** Offset of the first record in `buffer`. */
  startOffset: number;
  count: number;
  /** Stored records exactly as written to the segment. */
  buffer: Buffer;
  /** Position in `buffer` of each record. */
  positions: Uint32Array;
}

export class TailCache {
  private chunks: TailChunk[] = [];
  private head = 0; // chunks before head are evicted
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The first offset served from memory, or null when nothing is cached. */
  get firstOffset(): number | null {
    return this.head < this.chunks.length ? this.chunks[this.head]!.startOffset : null;
  }

  get cachedBytes(): number {
    return this.bytes;
  }

  add(chunk: TailChunk): void {
    if (this.maxBytes <= 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.buffer.length;
    // Keep at least the newest chunk, whatever its size: it is the one caught-up consumers ask for.
    while (this.bytes > this.maxBytes && this.chunks.length - this.head > 1) {
      this.bytes -= this.chunks[this.head]!.buffer.length;
      this.chunks[this.head++] = undefined as unknown as TailChunk;
    }
    if (this.head > 64 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** Forgets chunks that begin before `offset` (retention moved the log start past them). */
  dropBefore(offset: number): void {
    while (this.head < this.chunks.length) {
      const c = this.chunks[this.head]!;
      if (c.startOffset + c.count > offset) break;
      this.bytes -= c.buffer.length;
      this.chunks[this.head++] = undefined as unknown as TailChunk;
    }
  }

  clear(): void {
    this.chunks = [];
    this.head = 0;
    this.bytes = 0;
  }

  /**
   * Up to `maxBytes` of stored records from `offset` as views into the cached buffers, or null when
   * `offset` is older than the cache. The last view may end inside a record (a byte cut, as the
   * protocol allows).
   */
  read(offset: number, maxBytes: number): Buffer[] | null {
    const first = this.firstOffset;
    if (first === null || offset < first) return null;
    let i = this.findChunk(offset);
    if (i < 0) return null;
    const views: Buffer[] = [];
    let left = maxBytes;
    let chunk = this.chunks[i]!;
    let from = chunk.positions[offset - chunk.startOffset]!;
    while (left > 0) {
      const take = Math.min(left, chunk.buffer.length - from);
      views.push(chunk.buffer.subarray(from, from + take));
      left -= take;
      if (++i >= this.chunks.length) break;
      chunk = this.chunks[i]!;
      from = 0;
    }
    return views;
  }

  private findChunk(offset: number): number {
    let lo = this.head;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.chunks[mid]!.startOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    const c = this.chunks[lo];
    return c !== undefined && offset >= c.startOffset && offset < c.startOffset + c.count ? lo : -1;
  }
}
