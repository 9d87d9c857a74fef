import fs from 'node:fs';
import path from 'node:path';
import { recordHeaderBytes, writeStoredRecords } from '@booblik/protocol';
import { type LogConfig, SEGMENT_BYTES_LIMIT, SEGMENT_BYTES_MIN } from './config.js';
import {
  LogClosedError,
  OffsetMismatchError,
  OffsetOutOfRangeError,
  RecordTooLargeError,
  StorageError,
  TruncationRefusedError,
} from './errors.js';
import type { Fragment, FragmentSource, FragmentView, PersistCandidate, RemoteHistory } from './fragment.js';
import { thinIndex } from './fragment.js';
import { fdatasync, fsyncDir, fsyncDirAsync, mkdirDurable, pwriteFully } from './fs-util.js';
import { HighWatermark } from './high-watermark.js';
import { type Logger, silentLogger } from './logger.js';
import { type ReadBufferPool, sharedReadBuffers } from './read-buffers.js';
import type { ScanStop } from './record-scan.js';
import { type SegmentScan, scanSegmentFile, truncateSegment } from './recovery.js';
import { RemoteSegment } from './remote-segment.js';
import { expiredPrefix } from './retention.js';
import { Segment } from './segment.js';
import { parseSegmentFileName, segmentFileName } from './segment-name.js';
import { positionOfOffset, readFromSegment } from './segment-read.js';
import { SparseIndex } from './sparse-index.js';
import { frameStoredGroup } from './stored-group.js';
import { TailCache, type TailChunk } from './tail-cache.js';

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
  fd: number;
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
}

/**
 * A group written but not yet readable, with where it left each segment it touched. A recovered tail
 * held back at open (see `LogOptions.highWatermark`) is one such group without a chunk: its bytes are
 * read from the files.
 */
interface UnpublishedGroup {
  startOffset: number;
  endOffset: number;
  chunk: TailChunk | null;
  segmentEnds: [Segment, number][];
}

/** The positions of a one-record group (it starts its buffer), shared rather than copied per group. */
const LONE_RECORD_POSITIONS = new Uint32Array(1);

/**
 * One partition on disk: its segments, the sparse index of each, the in-memory tail, and the
 * published high watermark. Writes are synchronous (the page cache absorbs them); `sync` makes them
 * durable; `publish` makes them readable. It knows nothing of queues or acks: that is the writer's.
 */
export class PartitionLog {
  readonly highWatermark: HighWatermark;
  private readonly tail: TailCache;
  private readonly readBuffers: ReadBufferPool;
  private readonly logger: Logger;
  private readonly now: () => number;
  /** Segments written since the last `sync`. */
  private readonly unsynced = new Set<Segment>();
  /**
   * A segment was created since the last directory fsync began. A new segment's name is durable
   * only once the directory is synced; the roll leaves that to the next `sync` (the barrier a FORCED
   * group waits for), so it costs the write path no fsync.
   */
  private dirUnsynced = false;
  /** The directory fsync under way: every `sync` waits for it, whichever started it. */
  private dirSyncing: Promise<void> | undefined;
  /** Groups written but not yet published, in order, with where each left the segments it touched. */
  private unpublished: UnpublishedGroup[] = [];
  /** Closed or removed: reads are refused rather than touching a closed descriptor. */
  private isClosed = false;
  /** Scratch for record positions while converting a group; grown on demand. */
  private positionsScratch = new Uint32Array(1024);
  /** The stored bytes of the group written last (see `lastWrittenStored`). */
  private lastStored: Buffer = Buffer.alloc(0);
  /** The store's bytes, when the partition has one. */
  private readonly source: FragmentSource | undefined;
  /** Segments only in the store, oldest first, ending where `segments` begin. */
  private remote: RemoteSegment[];
  /** Fragments retention dropped from the log: their objects are to be deleted from the store. */
  private expired: Fragment[] = [];

  private constructor(
    readonly dir: string,
    readonly name: string,
    private currentConfig: Readonly<LogConfig>,
    private segments: Segment[],
    options: LogOptions,
    remote: RemoteSegment[],
  ) {
    this.source = options.remote?.source;
    this.remote = remote;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.tail = new TailCache(currentConfig.tailCacheBytes);
    this.readBuffers = options.readBuffers ?? sharedReadBuffers;
    const end = this.active.nextOffset;
    const held = Math.min(end, Math.max(options.highWatermark ?? end, this.segments[0]!.baseOffset));
    this.highWatermark = new HighWatermark(held);
    if (held < end) this.holdBack(held);
  }

  /** Makes the recovered records from `offset` on unreadable: one unpublished group up to the log end. */
  private holdBack(offset: number): void {
    const segmentEnds: [Segment, number][] = [];
    for (const s of this.segments) {
      if (s.nextOffset <= offset) continue;
      segmentEnds.push([s, s.sizeBytes]);
      s.visibleBytes = s.baseOffset >= offset ? 0 : positionOfOffset(s, offset);
    }
    this.unpublished.push({ startOffset: offset, endOffset: this.logEndOffset, chunk: null, segmentEnds });
  }

  /**
   * Opens (creating if absent) the partition in `dir`, scanning every segment: records are checked
   * one by one and the first that fails ends the log; the file is cut there and any later segment is
   * removed, so offsets stay contiguous and stale bytes never come back.
   */
  static open(
    dir: string,
    name: string,
    config: Readonly<LogConfig>,
    options: LogOptions = {},
  ): { log: PartitionLog; report: OpenReport } {
    const steps = PartitionLog.opening(dir, name, config, options);
    let step = steps.next();
    while (!step.done) {
      const r = step.value;
      step = steps.next(scanSegmentFile(r.fd, r.fileBytes, r.baseOffset, r.indexIntervalBytes));
    }
    return step.value;
  }

  /**
   * `open` with each segment's scan made by `scan` (a worker thread, see recovery-worker.ts), so a
   * partition with data opened while the process serves others does not stall its event loop.
   */
  static async openAsync(
    dir: string,
    name: string,
    config: Readonly<LogConfig>,
    options: LogOptions & { scan: SegmentScanner },
  ): Promise<{ log: PartitionLog; report: OpenReport }> {
    const steps = PartitionLog.opening(dir, name, config, options);
    let step = steps.next();
    while (!step.done) step = steps.next(await options.scan(step.value));
    return step.value;
  }

  /** The steps of opening, yielding each segment scan to the caller (sync or async). */
  private static *opening(
    dir: string,
    name: string,
    config: Readonly<LogConfig>,
    options: LogOptions,
  ): Generator<SegmentScanRequest, { log: PartitionLog; report: OpenReport }, SegmentScan> {
    checkConfig(config);
    const started = performance.now();
    const logger = options.logger ?? silentLogger;
    mkdirDurable(dir);
    const bases = fs
      .readdirSync(dir)
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
          const bytes = fs.statSync(file).size;
          cuts.push({ segmentBaseOffset: base, offset: base, bytes, reason: 'after-earlier-cut' });
          logger.warn(
            `${name}: removed segment ${segmentFileName(base)} (${bytes} bytes): it follows a cut or a gap at offset ${expectedBase}`,
          );
          fs.unlinkSync(file);
          cutEarlier = true;
          continue;
        }
        const fd = fs.openSync(file, 'r+');
        let scan: SegmentScan;
        let stat: fs.Stats;
        try {
          stat = fs.fstatSync(fd);
          scan = yield {
            fd,
            fileBytes: stat.size,
            baseOffset: base,
            indexIntervalBytes: config.indexIntervalBytes,
          };
        } catch (error) {
          fs.closeSync(fd);
          throw error;
        }
        if (scan.invalidBytes > 0) {
          truncateSegment(fd, scan.validBytes);
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
          new Segment(dir, base, fd, scan.index, {
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
      segments.push(createSegment(dir, storeEnd, config, options.now ?? Date.now));
      if (storeEnd > 0) restoredAt = storeEnd;
    }
    const remote = options.remote
      ? attachFragments(name, segments, fragments, options.remote.source, logger)
      : [];
    // Before anything is acknowledged: the first segment's name (without it a power cut loses every
    // record of a new partition, however many fdatasyncs its file had) and the removals of recovery.
    fsyncDir(dir);
    const log = new PartitionLog(dir, name, config, segments, options, remote);
    const report: OpenReport = {
      segments: segments.length,
      bytes: log.sizeBytes,
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
      cuts,
      recoveryMs: performance.now() - started,
      restoredAt,
    };
    return { log, report };
  }

  /**
   * Takes new settings at runtime (a topic's spec changed): retention applies at its next check, the
   * segment capacity to the next roll. The tail cache and index interval stay as opened.
   */
  reconfigure(config: Readonly<LogConfig>): void {
    checkConfig(config);
    this.currentConfig = config;
  }

  get config(): Readonly<LogConfig> {
    return this.currentConfig;
  }

  get active(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  /** The oldest offset readable, from the store when it holds older history than the disk. */
  get logStartOffset(): number {
    return this.remote.length > 0 ? this.remote[0]!.baseOffset : this.localStartOffset;
  }

  /** The oldest offset in a local segment file. */
  get localStartOffset(): number {
    return this.segments[0]!.baseOffset;
  }

  /** Bytes of the segments held only in the store. */
  get storeOnlyBytes(): number {
    let total = 0;
    for (const s of this.remote) total += s.sizeBytes;
    return total;
  }

  /** The offset the next record will get (written, not necessarily published yet). */
  get logEndOffset(): number {
    return this.active.nextOffset;
  }

  get sizeBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.sizeBytes;
    return total;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /** Stored bytes a batch takes: each record gains a 4-byte CRC. */
  static storedBytes(batch: AppendBatch): number {
    return batch.records.length + batch.count * 4;
  }

  /**
   * Writes a group of batches with one write per segment touched (a roll splits it), returning each
   * batch's base offset. All or nothing: if the disk refuses any part, every byte of the group is cut
   * off again and StorageError is thrown. Nothing becomes readable until `publish`.
   */
  writeGroup(batches: readonly AppendBatch[]): number[] {
    let bytes = 0;
    let count = 0;
    for (const b of batches) {
      bytes += PartitionLog.storedBytes(b);
      count += b.count;
    }
    const positions = this.positionsFor(count);
    const buffer = Buffer.allocUnsafe(bytes);
    const bases: number[] = [];
    const firstOffset = this.active.nextOffset;
    let at = 0;
    let k = 0;
    for (const b of batches) {
      bases.push(firstOffset + k);
      at += writeStoredRecords(b.records, b.count, buffer, at, positions, k);
      k += b.count;
    }
    positions[count] = bytes; // sentinel: the end of the last record
    this.writeStored(buffer, positions, count);
    return bases;
  }

  /**
   * A replica's write: `stored` is a group exactly as the primary's `writeGroup` built it (records in
   * the segment format), to land at `baseOffset`. Every record is framed and its CRC checked first;
   * then it is written as `writeGroup` writes (one write per segment touched, all or nothing,
   * unpublished until published). The log keeps `stored` (its tail cache serves reads from it): the
   * caller must not reuse the buffer. Refused with nothing written: OffsetMismatchError when
   * `baseOffset` is not the log's end, CorruptRecordError when the bytes are not `count` good records,
   * RecordTooLargeError for a record no segment can hold, RangeError for a count below 1.
   */
  writeStoredGroup(baseOffset: number, stored: Buffer, count: number): void {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`count: ${count}, expected >= 1`);
    if (baseOffset !== this.logEndOffset) throw new OffsetMismatchError(baseOffset, this.logEndOffset);
    const positions = this.positionsFor(count);
    frameStoredGroup(stored, count, baseOffset, positions);
    const max = this.config.segmentBytesMax;
    if (stored.length > max) {
      for (let i = 0; i < count; i++) {
        const bytes = positions[i + 1]! - positions[i]!;
        if (bytes > max) throw new RecordTooLargeError(i, bytes - recordHeaderBytes, max);
      }
    }
    this.writeStored(stored, positions, count);
  }

  /**
   * The stored bytes of the group written last, as written (no copy): what a primary streams to its
   * replicas. Only meaningful right after `writeGroup` or `writeStoredGroup` returned.
   */
  get lastWrittenStored(): Buffer {
    return this.lastStored;
  }

  /** The position scratch, grown to hold `count` records and the end sentinel. */
  private positionsFor(count: number): Uint32Array {
    if (this.positionsScratch.length < count + 1) {
      this.positionsScratch = new Uint32Array(Math.max(count + 1, this.positionsScratch.length * 2));
    }
    return this.positionsScratch;
  }

  /** The one write path of primary and replica: `buffer` holds `count` framed records at `positions`. */
  private writeStored(buffer: Buffer, positions: Uint32Array, count: number): void {
    const firstOffset = this.active.nextOffset;
    const touched = this.writeRuns(buffer, positions, count);
    this.lastStored = buffer;
    this.unpublished.push({
      startOffset: firstOffset,
      chunk: {
        startOffset: firstOffset,
        count,
        buffer,
        positions: count === 1 ? LONE_RECORD_POSITIONS : positions.slice(0, count),
      },
      endOffset: firstOffset + count,
      segmentEnds: touched.map((s) => [s, s.sizeBytes]),
    });
  }

  /**
   * Splits the group where the active segment would pass its capacity, then writes each run.
   * Returns the segments written to.
   */
  private writeRuns(buffer: Buffer, positions: Uint32Array, count: number): Segment[] {
    const first = this.active;
    const firstSizeBefore = first.sizeBytes;
    if (buffer.length <= this.config.segmentBytesMax - firstSizeBefore) {
      // Nearly every group: it fits the active segment, one write and nothing to plan.
      try {
        pwriteFully(first.fd, buffer, firstSizeBefore);
      } catch (error) {
        this.undoRuns(first, firstSizeBefore, []);
        throw this.writeRefused(error);
      }
      this.noteRun(first, positions, 0, count, this.now());
      return [first];
    }
    const created: Segment[] = [];
    const runs: { segment: Segment; from: number; to: number; firstRecord: number; records: number }[] = [];
    try {
      const firstOffset = first.nextOffset;
      let segment = first;
      let runStart = 0;
      let room = this.config.segmentBytesMax - segment.sizeBytes;
      for (let i = 0; i < count; i++) {
        if (positions[i + 1]! - positions[runStart]! > room) {
          // Record i would pass the capacity: the run so far stays here, record i starts a segment.
          if (i > runStart) runs.push(this.planRun(segment, positions, runStart, i));
          segment = createSegment(this.dir, firstOffset + i, this.config, this.now);
          created.push(segment);
          runStart = i;
          room = this.config.segmentBytesMax;
        }
      }
      runs.push(this.planRun(segment, positions, runStart, count));
      for (const run of runs) {
        pwriteFully(run.segment.fd, buffer.subarray(run.from, run.to), run.segment.sizeBytes);
      }
    } catch (error) {
      this.undoRuns(first, firstSizeBefore, created);
      throw this.writeRefused(error);
    }
    const now = this.now();
    for (const run of runs) this.noteRun(run.segment, positions, run.firstRecord, run.records, now);
    for (const s of created) this.segments.push(s);
    if (created.length > 0) this.dirUnsynced = true;
    return runs.map((r) => r.segment);
  }

  /** Records a run just written to `s`: offsets, size, the sparse index, and that it needs a sync. */
  private noteRun(
    s: Segment,
    positions: Uint32Array,
    firstRecord: number,
    records: number,
    now: number,
  ): void {
    for (let i = firstRecord; i < firstRecord + records; i++) {
      s.index.noteRecord(s.nextOffset, s.sizeBytes, positions[i + 1]! - positions[i]!);
      s.nextOffset++;
      s.sizeBytes += positions[i + 1]! - positions[i]!;
    }
    s.lastWriteMs = now;
    this.unsynced.add(s);
  }

  private writeRefused(error: unknown): StorageError {
    const code = (error as NodeJS.ErrnoException).code;
    return new StorageError(`${this.name}: write refused by the disk (${code ?? String(error)})`, code, {
      cause: error,
    });
  }

  private planRun(segment: Segment, positions: Uint32Array, fromRecord: number, toRecord: number) {
    return {
      segment,
      from: positions[fromRecord]!,
      to: positions[toRecord]!,
      firstRecord: fromRecord,
      records: toRecord - fromRecord,
    };
  }

  /** Takes a failed group back out: the first segment cut to its old size, new segments deleted. */
  private undoRuns(first: Segment, sizeBefore: number, created: Segment[]): void {
    try {
      fs.ftruncateSync(first.fd, sizeBefore);
    } catch (error) {
      this.logger.error(`${this.name}: could not cut a failed write back off: ${String(error)}`);
    }
    for (const s of created) {
      try {
        s.remove();
      } catch (error) {
        this.logger.error(`${this.name}: could not remove segment ${s.path}: ${String(error)}`);
      }
    }
  }

  /**
   * fdatasync every segment written since the last sync, and fsync the directory if a segment was
   * created: after this, those records survive a crash.
   */
  async sync(): Promise<void> {
    const segments = [...this.unsynced].filter((s) => !s.isRemoved);
    this.unsynced.clear();
    if (this.dirUnsynced) this.startDirSync();
    // A sync that finds a directory fsync under way waits for it too: a segment it covers may hold
    // records this sync is asked to make durable.
    const dirSynced = this.dirSyncing;
    // Each file is held open for its sync, as a read holds it: retention may remove the segment while
    // the fdatasync waits for a thread, and closing the descriptor under it failed the sync with EBADF,
    // refusing FORCED batches that were already in the log (found by the reliability suite).
    for (const s of segments) s.acquire();
    try {
      await Promise.all([dirSynced, ...segments.map((s) => fdatasync(s.fd))]);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new StorageError(`${this.name}: fdatasync failed (${code ?? String(error)})`, code, {
        cause: error,
      });
    } finally {
      for (const s of segments) s.release();
    }
  }

  get hasUnsynced(): boolean {
    return this.unsynced.size > 0 || this.dirUnsynced;
  }

  private startDirSync(): void {
    this.dirUnsynced = false;
    const syncing = fsyncDirAsync(this.dir).catch((error: unknown) => {
      this.dirUnsynced = true; // not known to be durable: the next sync tries again
      throw error;
    });
    this.dirSyncing = syncing;
    const done = () => {
      if (this.dirSyncing === syncing) this.dirSyncing = undefined;
    };
    syncing.then(done, done);
  }

  /**
   * Makes what was written up to `endOffset` (by default, everything) readable and moves the high
   * watermark there. Groups are published in the order they were written, never past a gap.
   */
  publish(endOffset = this.logEndOffset): void {
    while (this.unpublished.length > 0 && this.unpublished[0]!.endOffset <= endOffset) {
      this.publishOldest();
    }
    this.highWatermark.advance(endOffset);
  }

  /**
   * A replica's publish: `offset` is the primary's commit offset, which may fall inside a group this
   * log holds. Every written group ending at or before it is published, and the high watermark moves
   * to the end of the last one (so never past what is readable here, and never back). A group the
   * offset cuts waits for a later commit offset that covers it.
   */
  publishCommitted(offset: number): void {
    let end = -1;
    while (this.unpublished.length > 0 && this.unpublished[0]!.endOffset <= offset) {
      end = this.publishOldest();
    }
    if (end >= 0) this.highWatermark.advance(end);
  }

  /** Makes the oldest unpublished group readable; returns its end offset. */
  private publishOldest(): number {
    const group = this.unpublished.shift()!;
    for (const [segment, size] of group.segmentEnds) segment.visibleBytes = size;
    if (group.chunk !== null) this.tail.add(group.chunk);
    return group.endOffset;
  }

  /**
   * Removes every record at or above `offset` (a replica cutting back to where its log and a new
   * primary's agree); later writes land at `offset`. Refused with TruncationRefusedError, nothing changed, when a
   * reader may have seen the records (`offset` below the high watermark), past the log end, or below
   * the local segments. Durable before it returns: the segment holding `offset` is cut and
   * fdatasynced first, then later segments are removed and the directory fsynced (a crash between
   * leaves those after a gap, which recovery removes), so a crash never brings the cut records back.
   * A read in flight on a removed segment completes (its file closes when the read lets go). A disk
   * refusal is StorageError; the partition should then be reopened (recovery decides what is there).
   */
  truncateTo(offset: number): void {
    if (this.isClosed) throw new LogClosedError(this.name);
    const highWatermark = this.highWatermark.value;
    const logEndOffset = this.logEndOffset;
    if (!Number.isInteger(offset) || offset < highWatermark || offset > logEndOffset) {
      throw new TruncationRefusedError(
        offset,
        `truncateTo: offset ${offset}, expected ${highWatermark}..${logEndOffset} ` +
          '(from the high watermark, below which a reader may have seen a record, to the log end)',
      );
    }
    if (offset < this.localStartOffset) {
      throw new TruncationRefusedError(
        offset,
        `truncateTo: offset ${offset} is below the local start ${this.localStartOffset} (history only in the store)`,
      );
    }
    if (offset === logEndOffset) return;
    // Segments starting at or after `offset` go whole; the first segment always stays (cut to empty).
    let keep = this.segments.findIndex((s) => s.baseOffset >= offset);
    if (keep < 0) keep = this.segments.length;
    if (keep === 0) keep = 1;
    const cut = this.segments[keep - 1]!;
    const removed = this.segments.slice(keep);
    try {
      if (cut.nextOffset > offset) {
        const position = positionOfOffset(cut, offset);
        truncateSegment(cut.fd, position);
        cut.nextOffset = offset;
        cut.sizeBytes = position;
        cut.visibleBytes = Math.min(cut.visibleBytes, position);
        cut.index.truncateTo(offset, position);
      }
      this.segments.length = keep;
      for (const s of removed) {
        this.unsynced.delete(s);
        s.remove();
      }
      if (removed.length > 0) fsyncDir(this.dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new StorageError(
        `${this.name}: truncation refused by the disk (${code ?? String(error)})`,
        code,
        {
          cause: error,
        },
      );
    }
    // Published records all lie below the high watermark, so the tail cache holds none past `offset`;
    // only groups not yet published can reach past it.
    this.unpublished = this.unpublished.filter((g) => g.startOffset < offset);
    for (const g of this.unpublished) {
      if (g.endOffset > offset) {
        const count = offset - g.startOffset;
        if (g.chunk !== null) {
          g.chunk = {
            startOffset: g.startOffset,
            count,
            buffer: g.chunk.buffer.subarray(0, g.chunk.positions[count]),
            positions: g.chunk.positions.subarray(0, count),
          };
        }
        g.endOffset = offset;
      }
      g.segmentEnds = g.segmentEnds
        .filter(([s]) => !s.isRemoved)
        .map(([s, size]): [Segment, number] => [s, Math.min(size, s.sizeBytes)]);
    }
    this.logger.info(
      `${this.name}: truncated to offset ${offset} (was ${logEndOffset}; ${removed.length} segment(s) removed)`,
    );
  }

  /**
   * Up to `maxBytes` of stored records from `offset`, as file bytes, without parsing a record:
   * from the in-memory tail when it holds `offset`, else from the segment (a sparse-index lookup,
   * then a hop over record headers to the exact position). Stops at a segment's end.
   */
  async read(offset: number, maxBytes: number): Promise<ReadResult> {
    if (this.isClosed) throw new LogClosedError(this.name);
    const now = this.readNow(offset, maxBytes);
    if (now !== null) return now;
    const highWatermark = this.highWatermark.value;
    if (offset < this.localStartOffset) {
      const bytes = await this.remoteOf(offset).read(offset, maxBytes);
      return { highWatermark, chunks: bytes.length > 0 ? [bytes] : [], bytes: bytes.length };
    }
    const read = await this.readLocal(offset, maxBytes, false);
    if (read.bytes.length === 0) read.release?.();
    return {
      highWatermark,
      chunks: read.bytes.length > 0 ? [read.bytes] : [],
      bytes: read.bytes.length,
      release: read.release,
    };
  }

  /** From the segment holding `offset`: its published bytes, or all it holds (`written`). */
  private async readLocal(offset: number, maxBytes: number, written: boolean) {
    const segment = this.segmentOf(offset);
    segment.acquire();
    try {
      return await readFromSegment(
        segment,
        offset,
        maxBytes,
        this.config.indexIntervalBytes,
        this.readBuffers,
        written ? segment.sizeBytes : segment.visibleBytes,
      );
    } finally {
      segment.release();
    }
  }

  /**
   * Stored records from `offset` as written, published or not: a primary copying to a replica what
   * it lacks, records not committed yet included. Up to `maxBytes`, maybe cut inside the last record;
   * a copy the caller keeps (it waits for the replica's answer).
   */
  async readWritten(offset: number, maxBytes: number): Promise<Buffer> {
    if (this.isClosed) throw new LogClosedError(this.name);
    const end = this.logEndOffset;
    if (offset < this.localStartOffset || offset > end) {
      throw new OffsetOutOfRangeError(offset, this.localStartOffset, end);
    }
    if (offset === end) return Buffer.alloc(0);
    const read = await this.readLocal(offset, maxBytes, true);
    const copy = Buffer.from(read.bytes);
    read.release?.();
    return copy;
  }

  /**
   * `read` when it needs no disk: out of range (thrown), at the high watermark (empty), or from the
   * in-memory tail. Null when the records must be read from a segment file. A caught-up consumer
   * woken by a write is answered from here in the same turn, without a promise step.
   */
  readNow(offset: number, maxBytes: number): ReadResult | null {
    if (this.isClosed) throw new LogClosedError(this.name);
    const highWatermark = this.highWatermark.value;
    if (offset < this.logStartOffset || offset > highWatermark) {
      throw new OffsetOutOfRangeError(offset, this.logStartOffset, highWatermark);
    }
    if (offset === highWatermark) return { highWatermark, chunks: [], bytes: 0 };
    const cached = this.tail.read(offset, maxBytes);
    if (cached !== null) return { highWatermark, chunks: cached, bytes: sumLengths(cached) };
    return null;
  }

  private segmentOf(offset: number): Segment {
    return floorByBase(this.segments, offset);
  }

  private remoteOf(offset: number): RemoteSegment {
    if (this.isClosed) throw new LogClosedError(this.name);
    return floorByBase(this.remote, offset);
  }

  /**
   * Removes whole oldest segments (never the active one, nor one holding records not yet published)
   * while the partition holds more than retentionBytes, or while the oldest was last written longer
   * than retentionMs ago. A read already under way on a removed segment completes. Returns the
   * removed segments' base offsets. With a store, that retention covers the whole history (the
   * fragments it drops wait in `takeExpiredFragments` for their objects' deletion), a segment not yet
   * persisted never goes, and local retention then drops local copies of persisted segments.
   */
  enforceRetention(nowMs = this.now()): number[] {
    const { retentionBytes, retentionMs } = this.config;
    const limits = { bytes: retentionBytes, ms: retentionMs };
    const removed: number[] = [];
    const hasStore = this.source !== undefined;
    // Only records already readable may go. A segment holding records written but not yet
    // published (a FORCED group waiting for its fdatasync, rolled into a new segment) stays: removing
    // it deleted records before any consumer could read them and put logStartOffset past the high
    // watermark, so every FETCH was out of range (found by the reliability suite's retention check).
    const mayGoLocally = (s: Segment) =>
      s !== this.active &&
      s.nextOffset <= this.highWatermark.value &&
      (!hasStore || s.fragment !== undefined);

    const history = [...this.remote, ...this.segments];
    const gone = expiredPrefix(history, this.storeOnlyBytes + this.sizeBytes, limits, nowMs, (i) => {
      const s = history[i]!;
      return s instanceof RemoteSegment || mayGoLocally(s);
    });
    for (const s of history.slice(0, gone)) {
      if (s instanceof RemoteSegment) {
        this.remote.shift();
        this.expired.push(s.fragment);
      } else {
        this.removeOldestLocal();
        if (s.fragment !== undefined) this.expired.push(s.fragment);
      }
      removed.push(s.baseOffset);
    }

    if (hasStore) {
      const { localRetentionBytes, localRetentionMs } = this.config;
      const local = this.segments;
      const drop = expiredPrefix(
        local,
        this.sizeBytes,
        { bytes: localRetentionBytes, ms: localRetentionMs },
        nowMs,
        (i) => mayGoLocally(local[i]!),
      );
      for (let i = 0; i < drop; i++) {
        const s = this.removeOldestLocal();
        this.remote.push(new RemoteSegment(s.fragment!, this.source!));
        removed.push(s.baseOffset);
      }
    }
    if (removed.length > 0) {
      fsyncDir(this.dir);
      this.tail.dropBefore(this.localStartOffset);
      this.logger.info(
        `${this.name}: retention removed ${removed.length} segment(s); log start is now ${this.logStartOffset}` +
          (hasStore ? `, local start ${this.localStartOffset}` : ''),
      );
    }
    return removed;
  }

  private removeOldestLocal(): Segment {
    const oldest = this.segments.shift()!;
    this.unsynced.delete(oldest);
    oldest.remove();
    return oldest;
  }

  /** Fragments retention dropped since the last call: their objects may now be deleted. */
  takeExpiredFragments(): Fragment[] {
    return this.expired.splice(0);
  }

  /** Closed, published local segments not in the store yet, oldest first. */
  persistCandidates(): PersistCandidate[] {
    if (this.isClosed) return [];
    const candidates: PersistCandidate[] = [];
    for (const s of this.segments) {
      if (s === this.active || s.nextOffset > this.highWatermark.value) break;
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
  markPersisted(fragment: Fragment): boolean {
    const s = this.segments.find((x) => x.baseOffset === fragment.baseOffset);
    if (s === undefined || s === this.active || s.nextOffset !== fragment.endOffset) return false;
    s.fragment = fragment;
    return true;
  }

  /** Every segment of the history, oldest first, and where its bytes are. */
  fragmentViews(): FragmentView[] {
    const views: FragmentView[] = this.remote.map((r) => ({
      baseOffset: r.baseOffset,
      endOffset: r.nextOffset,
      sizeBytes: r.sizeBytes,
      location: 'store',
      persistedMs: r.fragment.persistedMs,
    }));
    for (const s of this.segments) {
      views.push({
        baseOffset: s.baseOffset,
        endOffset: s.nextOffset,
        sizeBytes: s.sizeBytes,
        location: s.fragment === undefined ? 'local' : 'both',
        persistedMs: s.fragment?.persistedMs ?? -1,
      });
    }
    return views;
  }

  /** Closes every segment file. Call after the writer has drained and synced. */
  close(): void {
    this.isClosed = true;
    for (const s of this.segments) s.close();
    this.tail.clear();
  }

  /**
   * Deletes the partition's files (its topic was deleted). Each segment is unlinked now and its file
   * closed when the last read in flight lets go, as retention does; later reads are refused with
   * LogClosedError. Call after the writer has drained.
   */
  removeFiles(): void {
    this.isClosed = true;
    for (const s of this.segments) s.remove();
    this.tail.clear();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The segment holding `offset` in a list sorted by base offset (the first when none starts before it). */
function floorByBase<T extends { baseOffset: number }>(list: readonly T[], offset: number): T {
  let lo = 0;
  let hi = list.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (list[mid]!.baseOffset <= offset) lo = mid;
    else hi = mid - 1;
  }
  return list[lo]!;
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

function createSegment(dir: string, base: number, config: Readonly<LogConfig>, now: () => number): Segment {
  const file = path.join(dir, segmentFileName(base));
  const fd = fs.openSync(file, 'w+');
  return new Segment(dir, base, fd, new SparseIndex(base, config.indexIntervalBytes), {
    records: 0,
    sizeBytes: 0,
    lastWriteMs: now(),
  });
}

function sumLengths(chunks: Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}

function checkConfig(config: Readonly<LogConfig>): void {
  if (config.segmentBytesMax < SEGMENT_BYTES_MIN || config.segmentBytesMax > SEGMENT_BYTES_LIMIT) {
    throw new RangeError(
      `segmentBytesMax: ${config.segmentBytesMax}, expected ${SEGMENT_BYTES_MIN}..${SEGMENT_BYTES_LIMIT}`,
    );
  }
  if (config.indexIntervalBytes < 1) {
    throw new RangeError(`indexIntervalBytes: ${config.indexIntervalBytes}, expected >= 1`);
  }
}
