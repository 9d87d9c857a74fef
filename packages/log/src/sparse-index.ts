/**
 * The in-memory sparse index of one segment: offset -> file position for one record per
 * index-interval bytes, and always the first. Rebuilt at open by the recovery scan; never a file.
 */
export class SparseIndex {
  /** Offsets relative to the segment's base; positions in the file. Grown by doubling. */
  private relOffsets = new Uint32Array(16);
  private positions = new Uint32Array(16);
  private size = 0;
  private bytesSinceEntry = 0;

  constructor(
    readonly baseOffset: number,
    private readonly intervalBytes: number,
  ) {}

  /**
   * An index from entries found by a scan (the native recovery scan builds them itself). `endPosition`
   * is where the segment's records end, so the next append knows how far it is from the last entry.
   */
  static fromEntries(
    baseOffset: number,
    intervalBytes: number,
    relOffsets: Uint32Array,
    positions: Uint32Array,
    endPosition: number,
  ): SparseIndex {
    const index = new SparseIndex(baseOffset, intervalBytes);
    const capacity = Math.max(16, relOffsets.length * 2);
    index.relOffsets = new Uint32Array(capacity);
    index.positions = new Uint32Array(capacity);
    index.relOffsets.set(relOffsets);
    index.positions.set(positions);
    index.size = relOffsets.length;
    index.bytesSinceEntry = index.size > 0 ? endPosition - positions[index.size - 1]! : 0;
    return index;
  }

  /** The entries as arrays (for a scan made in a worker thread; `fromEntries` rebuilds the index). */
  toEntries(): { relOffsets: Uint32Array; positions: Uint32Array } {
    return { relOffsets: this.relOffsets.slice(0, this.size), positions: this.positions.slice(0, this.size) };
  }

  get entries(): number {
    return this.size;
  }

  /** Notes a record at `position` of `bytes` (header included); adds an entry when the interval has passed. */
  noteRecord(offset: number, position: number, bytes: number): void {
    if (this.size === 0 || this.bytesSinceEntry >= this.intervalBytes) {
      this.add(offset - this.baseOffset, position);
      this.bytesSinceEntry = 0;
    }
    this.bytesSinceEntry += bytes;
  }

  private add(relOffset: number, position: number): void {
    if (this.size === this.relOffsets.length) {
      const grow = (a: Uint32Array) => {
        const b = new Uint32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.relOffsets = grow(this.relOffsets);
      this.positions = grow(this.positions);
    }
    this.relOffsets[this.size] = relOffset;
    this.positions[this.size] = position;
    this.size++;
  }

  /** Forgets the entries at or after `offset` (the segment was cut there, at file `position`). */
  truncateTo(offset: number, position: number): void {
    const rel = offset - this.baseOffset;
    while (this.size > 0 && this.relOffsets[this.size - 1]! >= rel) this.size--;
    this.bytesSinceEntry = this.size > 0 ? position - this.positions[this.size - 1]! : 0;
  }

  /** The last entry at or before `offset`: where to start scanning headers for it. */
  floor(offset: number): { offset: number; position: number } {
    const rel = offset - this.baseOffset;
    let lo = 0;
    let hi = this.size - 1;
    if (hi < 0 || rel < 0) return { offset: this.baseOffset, position: 0 };
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.relOffsets[mid]! <= rel) lo = mid;
      else hi = mid - 1;
    }
    return { offset: this.baseOffset + this.relOffsets[lo]!, position: this.positions[lo]! };
  }
}
