import path from 'node:path';
import type { LogConfig } from './config.js';
import { Segment } from './segment.js';
import type { SegmentFiles } from './segment-files.js';
import { segmentFileName } from './segment-name.js';
import { SparseIndex } from './sparse-index.js';

/** A new, empty segment file starting at `base`. */
export function createSegment(
  files: SegmentFiles,
  dir: string,
  base: number,
  config: Readonly<LogConfig>,
  now: () => number,
): Segment {
  const file = path.join(dir, segmentFileName(base));
  return new Segment(
    dir,
    base,
    files.open(file, 'create'),
    new SparseIndex(base, config.indexIntervalBytes),
    {
      records: 0,
      sizeBytes: 0,
      lastWriteMs: now(),
    },
  );
}

/** Records `[firstRecord, firstRecord + records)` of a group, bytes `[from, to)`, written to one segment. */
export interface Run {
  segment: Segment;
  from: number;
  to: number;
  firstRecord: number;
  records: number;
}

function planRun(segment: Segment, positions: Uint32Array, fromRecord: number, toRecord: number): Run {
  return {
    segment,
    from: positions[fromRecord]!,
    to: positions[toRecord]!,
    firstRecord: fromRecord,
    records: toRecord - fromRecord,
  };
}

/**
 * Where a group too big for the active segment's room is split: a run per segment, the new segments
 * created (into `created`, so a failure can remove them) where a record would pass the capacity.
 */
export function planRuns(
  files: SegmentFiles,
  first: Segment,
  positions: Uint32Array,
  count: number,
  config: Readonly<LogConfig>,
  now: () => number,
  created: Segment[],
): Run[] {
  const runs: Run[] = [];
  const firstOffset = first.nextOffset;
  let segment = first;
  let runStart = 0;
  let room = config.segmentBytesMax - segment.sizeBytes;
  for (let i = 0; i < count; i++) {
    if (positions[i + 1]! - positions[runStart]! > room) {
      // Record i would pass the capacity: the run so far stays here, record i starts a segment.
      if (i > runStart) runs.push(planRun(segment, positions, runStart, i));
      segment = createSegment(files, first.dir, firstOffset + i, config, now);
      created.push(segment);
      runStart = i;
      room = config.segmentBytesMax;
    }
  }
  runs.push(planRun(segment, positions, runStart, count));
  return runs;
}
