import type { Fragment, FragmentView, PersistCandidate } from './fragment.js';
import { thinIndex } from './fragment.js';
import { activeSegment, type LogState } from './log-state.js';

/** Closed, published local segments not in the store yet, oldest first. */
export function persistCandidates(log: LogState): PersistCandidate[] {
  if (log.isClosed) return [];
  const candidates: PersistCandidate[] = [];
  const active = activeSegment(log);
  for (const s of log.segments.local()) {
    if (s === active || s.nextOffset > log.highWatermark.value) break;
    if (s.fragment !== undefined || s.isRemoved || s.records === 0) continue;
    const { relOffsets, positions } = s.index.toEntries();
    candidates.push({
      baseOffset: s.baseOffset,
      endOffset: s.nextOffset,
      sizeBytes: s.sizeBytes,
      lastWriteMs: s.lastWriteMs,
      path: s.path,
      index: thinIndex(relOffsets, positions, s.sizeBytes),
    });
  }
  return candidates;
}

/** Notes that a closed segment is in the store now; false when it is no longer here. */
export function markPersisted(log: LogState, fragment: Fragment): boolean {
  const s = log.segments.local().find((x) => x.baseOffset === fragment.baseOffset);
  if (s === undefined || s === activeSegment(log) || s.nextOffset !== fragment.endOffset) return false;
  s.fragment = fragment;
  return true;
}

/** Every segment of the history, oldest first, and where its bytes are. */
export function fragmentViews(log: LogState): FragmentView[] {
  return log.segments.all().map((s) => ({
    baseOffset: s.baseOffset,
    endOffset: s.nextOffset,
    sizeBytes: s.sizeBytes,
    location: !s.isLocal ? 'store' : s.fragment === undefined ? 'local' : 'both',
    persistedMs: s.fragment?.persistedMs ?? -1,
  }));
}
