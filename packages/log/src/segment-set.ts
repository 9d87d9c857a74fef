import { invariant } from '@booblik/protocol';
import type { RemoteSegment } from './remote-segment.js';
import type { Segment } from './segment.js';

/** A segment of the set: a local file or only in the store, told apart by `isLocal`. */
export type AnySegment = Segment | RemoteSegment;

/**
 * A partition's segments in one ordered list, oldest first: store-only segments, then local ones,
 * the last being the active segment new records go to. Read, retention, truncation and persistence
 * all walk this one list.
 */
export class SegmentSet {
  private readonly list: AnySegment[];
  /** How many segments at the head are only in the store. */
  private storeOnly: number;

  constructor(storeOnly: readonly RemoteSegment[], local: readonly Segment[]) {
    if (local.length === 0) throw new RangeError('a segment set needs a local segment');
    this.list = [...storeOnly, ...local];
    this.storeOnly = storeOnly.length;
    for (let i = 1; i < this.list.length; i++) this.checkFollows(this.list[i - 1]!, this.list[i]!);
  }

  /** The list is ordered and contiguous: each segment starts where the one before ends. */
  private checkFollows(before: AnySegment, next: AnySegment): void {
    invariant(
      next.baseOffset === before.nextOffset,
      () =>
        `segment set: a segment from offset ${next.baseOffset} follows one ending at ${before.nextOffset} ` +
        `(starting at ${before.baseOffset}): segments must be contiguous`,
    );
  }

  get length(): number {
    return this.list.length;
  }

  /** The segment new records go to: always local. */
  get active(): Segment {
    return this.list[this.list.length - 1] as Segment;
  }

  get first(): AnySegment {
    return this.list[0]!;
  }

  /** The oldest local segment. */
  get firstLocal(): Segment {
    return this.list[this.storeOnly] as Segment;
  }

  get storeOnlyCount(): number {
    return this.storeOnly;
  }

  get localCount(): number {
    return this.list.length - this.storeOnly;
  }

  /** Every segment, oldest first. */
  all(): readonly AnySegment[] {
    return this.list;
  }

  /** The local segments, oldest first (a copy). */
  local(): Segment[] {
    return this.list.slice(this.storeOnly) as Segment[];
  }

  /** The store-only segments, oldest first (a copy). */
  remote(): RemoteSegment[] {
    return this.list.slice(0, this.storeOnly) as RemoteSegment[];
  }

  /** The segment holding `offset` (the first when none starts at or before it). */
  find(offset: number): AnySegment {
    return this.list[this.floorIndex(offset)]!;
  }

  /** The local segment holding `offset` (the oldest local one when none starts at or before it). */
  findLocal(offset: number): Segment {
    return this.list[Math.max(this.storeOnly, this.floorIndex(offset))] as Segment;
  }

  private floorIndex(offset: number): number {
    let lo = 0;
    let hi = this.list.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.list[mid]!.baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** A new active segment after the current one. */
  append(segment: Segment): void {
    this.checkFollows(this.active, segment);
    this.list.push(segment);
  }

  /** Takes the oldest segment out of the set (it is not removed: the caller decides how it goes). */
  dropHead(): AnySegment {
    if (this.list.length === 1) throw new RangeError('the active segment cannot be dropped');
    const head = this.list.shift()!;
    if (!head.isLocal) this.storeOnly--;
    return head;
  }

  /** The oldest local segment now served from the store only (its local copy went). */
  replaceFirstLocal(remote: RemoteSegment): Segment {
    if (this.localCount === 1) throw new RangeError('the active segment cannot leave the disk');
    const local = this.list[this.storeOnly] as Segment;
    invariant(
      remote.baseOffset === local.baseOffset && remote.nextOffset === local.nextOffset,
      () =>
        `segment set: the store's copy of offsets ${remote.baseOffset}..${remote.nextOffset} cannot stand ` +
        `for the local segment of ${local.baseOffset}..${local.nextOffset}`,
    );
    this.list[this.storeOnly] = remote;
    this.storeOnly++;
    return local;
  }

  /** Takes every local segment from the `keep`-th local one on out of the set, returning them. */
  truncateLocal(keep: number): Segment[] {
    if (keep < 1) throw new RangeError('the first local segment stays');
    return this.list.splice(this.storeOnly + keep) as Segment[];
  }

  /** Stored bytes of the local segments. */
  localBytes(): number {
    let total = 0;
    for (let i = this.storeOnly; i < this.list.length; i++) total += this.list[i]!.sizeBytes;
    return total;
  }

  /** Stored bytes of the store-only segments. */
  storeOnlyBytes(): number {
    let total = 0;
    for (let i = 0; i < this.storeOnly; i++) total += this.list[i]!.sizeBytes;
    return total;
  }
}
