/**
 * The storage seam: a segment whose bytes live in a store rather than (or as well as) in a local file.
 * The log defines what it needs here and never imports a store; the broker adapts one to it.
 */
import type { EpochEntry } from './epoch-history.js';
import { FRAGMENT_INDEX_MAX_ENTRIES } from './limits.js';

/** A sparse index as plain arrays: offsets relative to the segment's base, positions in its bytes. */
export interface FragmentIndex {
  /** The largest distance between two entries, in bytes: how far a read may have to hop. */
  intervalBytes: number;
  relOffsets: number[];
  positions: number[];
}

/** One closed segment persisted to a store: its bytes exactly as they were on disk. */
export interface Fragment {
  /** The object's key in the store. */
  key: string;
  baseOffset: number;
  /** One past the last offset it holds. */
  endOffset: number;
  /** Stored bytes of its records (the segment file's size). */
  sizeBytes: number;
  /** When its last record was written (retention by age). */
  lastWriteMs: number;
  /** When its upload completed. */
  persistedMs: number;
  index: FragmentIndex;
}

/** Reads bytes of a fragment from wherever it is kept. */
export interface FragmentSource {
  /** Bytes `[start, end)` of the fragment's object; fewer only if the object is shorter. */
  read(fragment: Fragment, start: number, end: number): Promise<Buffer>;
}

/** A partition's history in a store, handed to the log when it opens. */
export interface RemoteHistory {
  source: FragmentSource;
  /** Contiguous, oldest first; what the store's manifest lists. */
  fragments: readonly Fragment[];
  /**
   * What the store recorded of the partition beyond its fragments, for a log restored on an empty
   * disk: with it, the restore starts a new epoch (see restore-epoch.ts). Absent where epochs are
   * given by someone else (a cluster's primaries number them by their terms).
   */
  past?: StoredPast;
}

/** What a store's manifest recorded when it was last written. */
export interface StoredPast {
  /** The partition's epoch history, oldest first. */
  epochs: readonly EpochEntry[];
  /** The high watermark then (records below it were readable, so maybe read); null if not recorded. */
  highWatermark: number | null;
}

/** Where a segment's bytes are, as LIST_FRAGMENTS shows it. */
export type FragmentLocation = 'local' | 'store' | 'both';

export interface FragmentView {
  baseOffset: number;
  endOffset: number;
  sizeBytes: number;
  location: FragmentLocation;
  /** -1 when not persisted. */
  persistedMs: number;
}

/** A closed local segment waiting for its upload. */
export interface PersistCandidate {
  baseOffset: number;
  endOffset: number;
  sizeBytes: number;
  lastWriteMs: number;
  /** The segment file; it does not change any more. */
  path: string;
  index: FragmentIndex;
}

/** The former name of `FRAGMENT_INDEX_MAX_ENTRIES` (limits.ts), kept for code that imports it. */
export const FRAGMENT_INDEX_ENTRIES_MAX = FRAGMENT_INDEX_MAX_ENTRIES;

/** An index thinned to at most `FRAGMENT_INDEX_MAX_ENTRIES` entries (a manifest carries it). */
export function thinIndex(
  relOffsets: ArrayLike<number>,
  positions: ArrayLike<number>,
  sizeBytes: number,
): FragmentIndex {
  const step = Math.max(1, Math.ceil(relOffsets.length / FRAGMENT_INDEX_MAX_ENTRIES));
  const index: FragmentIndex = { intervalBytes: 0, relOffsets: [], positions: [] };
  for (let i = 0; i < relOffsets.length; i += step) {
    index.relOffsets.push(relOffsets[i]!);
    index.positions.push(positions[i]!);
  }
  for (let i = 0; i < index.positions.length; i++) {
    const next = i + 1 < index.positions.length ? index.positions[i + 1]! : sizeBytes;
    index.intervalBytes = Math.max(index.intervalBytes, next - index.positions[i]!);
  }
  return index;
}
