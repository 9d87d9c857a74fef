import { InvariantError, invariant, recordHeaderBytes, writeStoredRecords } from '@booblik/protocol';
import type { LogConfig } from './config.js';
import { OffsetMismatchError, RecordTooLargeError } from './errors.js';
import type { Fragment, FragmentView, PersistCandidate } from './fragment.js';
import { HighWatermark } from './high-watermark.js';
import { publishOldest, syncLog, writeStored } from './log-append.js';
import { checkConfig, type OpenedSegments, openSegments } from './log-open.js';
import { fragmentViews, markPersisted, persistCandidates } from './log-persist.js';
import { logStartOf, readNow, readPublished, readWritten } from './log-read.js';
import { enforceRetention, truncateTo } from './log-retention.js';
import { activeSegment, type LogState, logEndOf } from './log-state.js';
import type {
  AppendBatch,
  LogOptions,
  OpenReport,
  ReadResult,
  SegmentScanner,
  SegmentScanRequest,
} from './log-types.js';
import { silentLogger } from './logger.js';
import { sharedReadBuffers } from './read-buffers.js';
import { type SegmentScan, scanFile } from './recovery.js';
import type { Segment } from './segment.js';
import { nodeSegmentFiles } from './segment-files.js';
import { positionOfOffset } from './segment-read.js';
import { SegmentSet } from './segment-set.js';
import { frameStoredGroup } from './stored-group.js';
import { TailCache } from './tail-cache.js';

export type {
  AppendBatch,
  LogOptions,
  OpenReport,
  ReadResult,
  RecoveryCut,
  SegmentScanner,
  SegmentScanRequest,
} from './log-types.js';

/**
 * One partition on disk: its segments, the sparse index of each, the in-memory tail, and the
 * published high watermark. Writes are synchronous (the page cache absorbs them); `sync` makes them
 * durable; `publish` makes them readable. It knows nothing of queues or acks: that is the writer's.
 * Each job is in its own file (log-open, log-append, log-roll, log-read, log-retention, log-persist)
 * working on one `LogState`; this class is the face the writer and the broker use.
 */
export class PartitionLog {
  readonly highWatermark: HighWatermark;
  private readonly state: LogState;
  /** Scratch for record positions while converting a group; grown on demand. */
  private positionsScratch = new Uint32Array(1024);
  /** The stored bytes of the group written last (see `lastWrittenStored`). */
  private lastStored: Buffer = Buffer.alloc(0);
  /** The invariant that failed, once one has: the log is then closed and refuses further work. */
  private failure: InvariantError | undefined;
  /** The log end as last seen: it never goes back except through `truncateTo`. */
  private endSeen: number;

  private constructor(
    readonly dir: string,
    readonly name: string,
    config: Readonly<LogConfig>,
    opened: OpenedSegments,
    options: LogOptions,
  ) {
    const end = opened.segments[opened.segments.length - 1]!.nextOffset;
    const held = Math.min(end, Math.max(options.highWatermark ?? end, opened.segments[0]!.baseOffset));
    this.highWatermark = new HighWatermark(held);
    this.state = {
      dir,
      name,
      files: options.files ?? nodeSegmentFiles,
      config,
      segments: new SegmentSet(opened.remote, opened.segments),
      highWatermark: this.highWatermark,
      tail: new TailCache(config.tailCacheBytes),
      readBuffers: options.readBuffers ?? sharedReadBuffers,
      logger: options.logger ?? silentLogger,
      now: options.now ?? Date.now,
      source: options.remote?.source,
      unsynced: new Set(),
      dirUnsynced: false,
      dirSyncing: undefined,
      unpublished: [],
      expired: [],
      isClosed: false,
    };
    this.endSeen = end;
    if (held < end) this.holdBack(held);
  }

  /** The invariant that stopped this log, if one did. */
  get stoppedBy(): InvariantError | undefined {
    return this.failure;
  }

  private refuseIfStopped(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * A failed invariant is a bug whose state could lose records if carried on with: the log stops
   * (closes, and refuses every later call with the same error) and says why. Other errors pass.
   */
  private stopOn(error: unknown): unknown {
    if (error instanceof InvariantError && this.failure === undefined) {
      this.failure = error;
      this.state.logger.error(`${this.name}: stopped on a broken invariant: ${error.message}`);
      this.close();
    }
    return error;
  }

  /** After a write: the log end moved forward (or stayed), never back. */
  private checkEndForward(): void {
    const end = this.logEndOffset;
    const seen = this.endSeen;
    invariant(
      end >= seen,
      () => `${this.name}: the log end went back from ${seen} to ${end} outside truncateTo`,
    );
    this.endSeen = end;
  }

  /** Makes the recovered records from `offset` on unreadable: one unpublished group up to the log end. */
  private holdBack(offset: number): void {
    const segmentEnds: [Segment, number][] = [];
    for (const s of this.state.segments.local()) {
      if (s.nextOffset <= offset) continue;
      segmentEnds.push([s, s.sizeBytes]);
      s.visibleBytes = s.baseOffset >= offset ? 0 : positionOfOffset(s, offset);
      s.visibleEndOffset = Math.max(s.baseOffset, offset);
    }
    this.state.unpublished.push({
      startOffset: offset,
      endOffset: this.logEndOffset,
      chunk: null,
      segmentEnds,
    });
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
      step = steps.next(scanFile(r.file, r.fileBytes, r.baseOffset, r.indexIntervalBytes));
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
    const started = performance.now();
    const opened = yield* openSegments(dir, name, config, options);
    const log = new PartitionLog(dir, name, config, opened, options);
    const report: OpenReport = {
      segments: opened.segments.length,
      bytes: log.sizeBytes,
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
      cuts: opened.cuts,
      recoveryMs: performance.now() - started,
      restoredAt: opened.restoredAt,
    };
    return { log, report };
  }

  /**
   * Takes new settings at runtime (a topic's spec changed): retention applies at its next check, the
   * segment capacity to the next roll. The tail cache and index interval stay as opened.
   */
  reconfigure(config: Readonly<LogConfig>): void {
    checkConfig(config);
    this.state.config = config;
  }

  get config(): Readonly<LogConfig> {
    return this.state.config;
  }

  get active(): Segment {
    return activeSegment(this.state);
  }

  /** The oldest offset readable, from the store when it holds older history than the disk. */
  get logStartOffset(): number {
    return logStartOf(this.state);
  }

  /** The oldest offset in a local segment file. */
  get localStartOffset(): number {
    return this.state.segments.firstLocal.baseOffset;
  }

  /** Bytes of the segments held only in the store. */
  get storeOnlyBytes(): number {
    return this.state.segments.storeOnlyBytes();
  }

  /** The offset the next record will get (written, not necessarily published yet). */
  get logEndOffset(): number {
    return logEndOf(this.state);
  }

  get sizeBytes(): number {
    return this.state.segments.localBytes();
  }

  get segmentCount(): number {
    return this.state.segments.localCount;
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
    this.refuseIfStopped();
    let bytes = 0;
    let count = 0;
    for (const b of batches) {
      bytes += PartitionLog.storedBytes(b);
      count += b.count;
    }
    const positions = this.positionsFor(count);
    const buffer = Buffer.allocUnsafe(bytes);
    const bases: number[] = [];
    const firstOffset = this.logEndOffset;
    let at = 0;
    let k = 0;
    for (const b of batches) {
      bases.push(firstOffset + k);
      at += writeStoredRecords(b.records, b.count, buffer, at, positions, k);
      k += b.count;
    }
    positions[count] = bytes; // sentinel: the end of the last record
    try {
      writeStored(this.state, buffer, positions, count);
      this.checkEndForward();
    } catch (error) {
      throw this.stopOn(error);
    }
    this.lastStored = buffer;
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
    this.refuseIfStopped();
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
    try {
      writeStored(this.state, stored, positions, count);
      this.checkEndForward();
    } catch (error) {
      throw this.stopOn(error);
    }
    this.lastStored = stored;
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

  /**
   * fdatasync every segment written since the last sync, and fsync the directory if a segment was
   * created: after this, those records survive a crash.
   */
  sync(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return syncLog(this.state);
  }

  get hasUnsynced(): boolean {
    return this.state.unsynced.size > 0 || this.state.dirUnsynced;
  }

  /**
   * Makes what was written up to `endOffset` (by default, everything) readable and moves the high
   * watermark there. Groups are published in the order they were written, never past a gap.
   */
  publish(endOffset = this.logEndOffset): void {
    const { unpublished } = this.state;
    while (unpublished.length > 0 && unpublished[0]!.endOffset <= endOffset) publishOldest(this.state);
    this.checkPublishable(endOffset);
    this.highWatermark.advance(endOffset);
  }

  /**
   * A replica's publish: `offset` is the primary's commit offset, which may fall inside a group this
   * log holds. Every written group ending at or before it is published, and the high watermark moves
   * to the end of the last one (so never past what is readable here, and never back). A group the
   * offset cuts waits for a later commit offset that covers it.
   */
  publishCommitted(offset: number): void {
    const { unpublished } = this.state;
    let end = -1;
    while (unpublished.length > 0 && unpublished[0]!.endOffset <= offset) end = publishOldest(this.state);
    if (end >= 0) {
      this.checkPublishable(end);
      this.highWatermark.advance(end);
    }
  }

  /** The high watermark never passes what is written: a read up to it must find records. */
  private checkPublishable(offset: number): void {
    try {
      const end = this.logEndOffset;
      invariant(offset <= end, () => `${this.name}: publish to ${offset}, past the log end ${end}`);
    } catch (error) {
      throw this.stopOn(error);
    }
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
    this.refuseIfStopped();
    truncateTo(this.state, offset);
    this.endSeen = this.logEndOffset;
  }

  /**
   * Up to `maxBytes` of stored records from `offset`, as file bytes, without parsing a record:
   * from the in-memory tail when it holds `offset`, else from the segment (a sparse-index lookup,
   * then a hop over record headers to the exact position). Stops at a segment's end.
   */
  read(offset: number, maxBytes: number): Promise<ReadResult> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return readPublished(this.state, offset, maxBytes).catch((error: unknown) => {
      throw this.stopOn(error);
    });
  }

  /**
   * Stored records from `offset` as written, published or not: a primary copying to a replica what
   * it lacks, records not committed yet included. Up to `maxBytes`, maybe cut inside the last record;
   * a copy the caller keeps (it waits for the replica's answer).
   */
  readWritten(offset: number, maxBytes: number): Promise<Buffer> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return readWritten(this.state, offset, maxBytes);
  }

  /**
   * `read` when it needs no disk: out of range (thrown), at the high watermark (empty), or from the
   * in-memory tail. Null when the records must be read from a segment file. A caught-up consumer
   * woken by a write is answered from here in the same turn, without a promise step.
   */
  readNow(offset: number, maxBytes: number): ReadResult | null {
    this.refuseIfStopped();
    return readNow(this.state, offset, maxBytes);
  }

  /**
   * Removes whole oldest segments (never the active one, nor one holding records not yet published)
   * while the partition holds more than retentionBytes, or while the oldest was last written longer
   * than retentionMs ago. A read already under way on a removed segment completes. Returns the
   * removed segments' base offsets. With a store, that retention covers the whole history (the
   * fragments it drops wait in `takeExpiredFragments` for their objects' deletion), a segment not yet
   * persisted never goes, and local retention then drops local copies of persisted segments.
   */
  enforceRetention(nowMs = this.state.now()): number[] {
    this.refuseIfStopped();
    try {
      return enforceRetention(this.state, nowMs);
    } catch (error) {
      throw this.stopOn(error);
    }
  }

  /** Fragments retention dropped since the last call: their objects may now be deleted. */
  takeExpiredFragments(): Fragment[] {
    return this.state.expired.splice(0);
  }

  /** Closed, published local segments not in the store yet, oldest first. */
  persistCandidates(): PersistCandidate[] {
    return persistCandidates(this.state);
  }

  /** Notes that a closed segment is in the store now; false when it is no longer here. */
  markPersisted(fragment: Fragment): boolean {
    return markPersisted(this.state, fragment);
  }

  /** Every segment of the history, oldest first, and where its bytes are. */
  fragmentViews(): FragmentView[] {
    return fragmentViews(this.state);
  }

  /** Closes every segment file. Call after the writer has drained and synced. */
  close(): void {
    this.state.isClosed = true;
    for (const s of this.state.segments.all()) s.close();
    this.state.tail.clear();
  }

  /**
   * Deletes the partition's files (its topic was deleted). Each segment is unlinked now and its file
   * closed when the last read in flight lets go, as retention does; later reads are refused with
   * LogClosedError. Call after the writer has drained.
   */
  removeFiles(): void {
    this.state.isClosed = true;
    for (const s of this.state.segments.all()) s.remove();
    this.state.tail.clear();
    this.state.files.removeDir(this.dir);
  }
}
