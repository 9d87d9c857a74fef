import path from 'node:path';
import type { LogConfig } from './config.js';
import type { Fragment, FragmentSource } from './fragment.js';
import { SEGMENT_LIMIT_BYTES, SEGMENT_MIN_BYTES } from './limits.js';
import { createSegment } from './log-roll.js';
import type { LogOptions, RecoveryCut, SegmentScanRequest } from './log-types.js';
import { type Logger, silentLogger } from './logger.js';
import { type SegmentScan, truncateSegment } from './recovery.js';
import { RemoteSegment } from './remote-segment.js';
import { Segment } from './segment.js';
import { nodeSegmentFiles } from './segment-files.js';
import { parseSegmentFileName, segmentFileName } from './segment-name.js';

/** What opening found on disk and in the store, for the log to start from. */
export interface OpenedSegments {
  segments: Segment[];
  remote: RemoteSegment[];
  cuts: RecoveryCut[];
  restoredAt: number | null;
}

/**
 * The steps of opening, yielding each segment scan to the caller (sync or async): records are checked
 * one by one and the first that fails ends the log; the file is cut there and any later segment is
 * removed, so offsets stay contiguous and stale bytes never come back.
 */
export function* openSegments(
  dir: string,
  name: string,
  config: Readonly<LogConfig>,
  options: LogOptions,
): Generator<SegmentScanRequest, OpenedSegments, SegmentScan> {
  checkConfig(config);
  const logger = options.logger ?? silentLogger;
  const files = options.files ?? nodeSegmentFiles;
  files.mkdirDurable(dir);
  const bases = files
    .list(dir)
    .map(parseSegmentFileName)
    .filter((b): b is number => b !== null)
    .sort((a, b) => a - b);
  const segments: Segment[] = [];
  const cuts: RecoveryCut[] = [];
  let expectedBase: number | null = null;
  let cutEarlier = false;
  try {
    for (const base of bases) {
      const file = path.join(dir, segmentFileName(base));
      // A segment that does not continue the one before (a cut, or a gap) cannot be trusted either.
      if (cutEarlier || (expectedBase !== null && base !== expectedBase)) {
        const bytes = files.sizeOf(file);
        cuts.push({ segmentBaseOffset: base, offset: base, bytes, reason: 'after-earlier-cut' });
        logger.warn(
          `${name}: removed segment ${segmentFileName(base)} (${bytes} bytes): it follows a cut or a gap at offset ${expectedBase}`,
        );
        files.unlink(file);
        cutEarlier = true;
        continue;
      }
      const segmentFile = files.open(file, 'existing');
      let scan: SegmentScan;
      let stat: { sizeBytes: number; mtimeMs: number };
      try {
        stat = segmentFile.stat();
        scan = yield {
          fd: segmentFile.fd,
          file: segmentFile,
          fileBytes: stat.sizeBytes,
          baseOffset: base,
          indexIntervalBytes: config.indexIntervalBytes,
        };
      } catch (error) {
        segmentFile.close();
        throw error;
      }
      if (scan.invalidBytes > 0) {
        truncateSegment(segmentFile, scan.validBytes);
        cuts.push({
          segmentBaseOffset: base,
          offset: base + scan.records,
          bytes: scan.invalidBytes,
          reason: scan.stop,
        });
        logger.warn(
          `${name}: recovery cut ${scan.invalidBytes} bytes at offset ${base + scan.records} ` +
            `(segment ${segmentFileName(base)}, position ${scan.validBytes}): ${scan.stop}`,
        );
        cutEarlier = true;
      }
      segments.push(
        new Segment(dir, base, segmentFile, scan.index, {
          records: scan.records,
          sizeBytes: scan.validBytes,
          lastWriteMs: stat.mtimeMs,
        }),
      );
      expectedBase = base + scan.records;
    }
  } catch (error) {
    for (const s of segments) s.close();
    throw error;
  }
  const fragments = options.remote?.fragments ?? [];
  const storeEnd = fragments.length > 0 ? fragments[fragments.length - 1]!.endOffset : 0;
  if (segments.length === 1 && segments[0]!.records === 0 && segments[0]!.baseOffset < storeEnd) {
    // An empty segment from a start without the store's history: the history wins.
    segments.pop()!.remove();
  }
  let restoredAt: number | null = null;
  if (segments.length === 0) {
    // A new partition, or a lost disk: offsets continue where the store's history ends.
    segments.push(createSegment(files, dir, storeEnd, config, options.now ?? Date.now));
    if (storeEnd > 0) restoredAt = storeEnd;
  }
  const remote = options.remote
    ? attachFragments(name, segments, fragments, options.remote.source, logger)
    : [];
  // Before anything is acknowledged: the first segment's name (without it a power cut loses every
  // record of a new partition, however many fdatasyncs its file had) and the removals of recovery.
  files.fsyncDir(dir);
  return { segments, remote, cuts, restoredAt };
}

/**
 * Joins the store's history to the local segments: fragments that match a local segment mark it
 * persisted; those before the local start become remote segments if they reach it without a gap.
 */
function attachFragments(
  name: string,
  segments: Segment[],
  fragments: readonly Fragment[],
  source: FragmentSource,
  logger: Logger,
): RemoteSegment[] {
  const localStart = segments[0]!.baseOffset;
  const byBase = new Map(segments.map((s) => [s.baseOffset, s]));
  const remote: RemoteSegment[] = [];
  for (const f of fragments) {
    if (f.endOffset <= localStart) {
      remote.push(new RemoteSegment(f, source));
      continue;
    }
    const local = byBase.get(f.baseOffset);
    if (local !== undefined && local.nextOffset === f.endOffset && local !== segments[segments.length - 1]) {
      local.fragment = f;
    }
  }
  // Only a chain that ends where the disk begins is history; anything before a gap is unreachable.
  let keep = remote.length;
  let expected = localStart;
  while (keep > 0 && remote[keep - 1]!.nextOffset === expected) {
    expected = remote[keep - 1]!.baseOffset;
    keep--;
  }
  if (keep > 0) {
    logger.warn(
      `${name}: the store's fragments before offset ${expected} do not reach the local log start ${localStart} without a gap; they are not served`,
    );
  }
  return remote.slice(keep);
}

export function checkConfig(config: Readonly<LogConfig>): void {
  if (config.segmentBytesMax < SEGMENT_MIN_BYTES || config.segmentBytesMax > SEGMENT_LIMIT_BYTES) {
    throw new RangeError(
      `segmentBytesMax: ${config.segmentBytesMax}, expected ${SEGMENT_MIN_BYTES}..${SEGMENT_LIMIT_BYTES}`,
    );
  }
  if (config.indexIntervalBytes < 1) {
    throw new RangeError(`indexIntervalBytes: ${config.indexIntervalBytes}, expected >= 1`);
  }
}
