import type { AckPolicyValue } from '@booblik/protocol';
import type { LogConfig } from './config.js';
import { EpochHistory } from './epoch-history.js';
import type { Fragment, FragmentView, PersistCandidate, RemoteHistory } from './fragment.js';
import type { HighWatermark } from './high-watermark.js';
import { type Logger, silentLogger } from './logger.js';
import {
  type AppendBatch,
  type OpenReport,
  PartitionLog,
  type ReadResult,
  type SegmentScanner,
} from './partition-log.js';
import {
  type AppendResult,
  type AppendWaiter,
  PartitionWriter,
  type ReplicationGate,
  type WriterStats,
} from './partition-writer.js';
import { beginRestoreEpoch, type RestoreEpoch } from './restore-epoch.js';
import { partitionDirName } from './segment-name.js';
import { sharedWorkerScanner } from './worker-scanner.js';

/** What opening found: the log's recovery, and the epoch a restore on an empty disk began (or null). */
export type PartitionOpenReport = OpenReport & { restore: RestoreEpoch | null };

/**
 * One partition as the broker sees it: appends go through the writer (group commit), reads and the
 * high watermark come from the log. This is the unit a registry looks up by (topic, partition).
 *
 * Replicated, it is either a primary or a replica at a time, never both. A primary appends through
 * the writer with a replication gate set (`setReplicationGate`, `commitTo`, `failUncommitted`). A
 * replica never takes a PRODUCE: it writes the primary's groups with `writeReplicated` (through the
 * same writer) and publishes with `publishCommitted`. The writer refuses (WriterModeError) a write of
 * one kind while one of the other waits for its answer. `truncateTo` cuts the log and the epoch
 * history back.
 */
export class Partition {
  private constructor(
    readonly topic: string,
    readonly id: number,
    private readonly log: PartitionLog,
    private readonly writer: PartitionWriter,
    /** Which epoch wrote which records (the `epochs` file beside the segments). */
    readonly epochs: EpochHistory,
  ) {}

  /** Opens `<dataDir>/<topic>-<partition>/`, recovering every segment first. */
  static open(
    dataDir: string,
    topic: string,
    id: number,
    config: Readonly<LogConfig>,
    options: { logger?: Logger; now?: () => number; remote?: RemoteHistory; highWatermark?: number } = {},
  ): { partition: Partition; report: PartitionOpenReport } {
    const name = partitionDirName(topic, id);
    const { log, report } = PartitionLog.open(`${dataDir}/${name}`, name, config, options);
    return Partition.around(topic, id, log, report, options);
  }

  /**
   * `open` with the recovery scan in a worker thread: for partitions opened while the process serves
   * others, so a large one does not stall every connection while it recovers.
   */
  static async openAsync(
    dataDir: string,
    topic: string,
    id: number,
    config: Readonly<LogConfig>,
    options: {
      logger?: Logger;
      now?: () => number;
      scan?: SegmentScanner;
      remote?: RemoteHistory;
      highWatermark?: number;
    } = {},
  ): Promise<{ partition: Partition; report: PartitionOpenReport }> {
    const name = partitionDirName(topic, id);
    const { log, report } = await PartitionLog.openAsync(`${dataDir}/${name}`, name, config, {
      ...options,
      scan: options.scan ?? sharedWorkerScanner.scan,
    });
    return Partition.around(topic, id, log, report, options);
  }

  /**
   * The writer and the epoch history of an opened log, a new epoch begun if the log was restored on
   * an empty disk from a store that keeps epochs (the log is closed if the history is refused).
   */
  private static around(
    topic: string,
    id: number,
    log: PartitionLog,
    report: OpenReport,
    options: { logger?: Logger; remote?: RemoteHistory },
  ): { partition: Partition; report: PartitionOpenReport } {
    const logger = options.logger;
    let epochs: EpochHistory;
    let restore: RestoreEpoch | null = null;
    try {
      epochs = EpochHistory.open(log.dir, log.logEndOffset);
      const past = options.remote?.past;
      if (report.restoredAt !== null && past !== undefined) {
        restore = beginRestoreEpoch(epochs, report.restoredAt, past, log.name, logger ?? silentLogger);
      } else if (report.restoredAt !== null) {
        logger?.info(
          `${log.name}: restored from the store: offsets 0..${report.restoredAt} are read from it`,
        );
      }
    } catch (error) {
      log.close();
      throw error;
    }
    const writer = new PartitionWriter(log, logger ? { logger } : {});
    return { partition: new Partition(topic, id, log, writer, epochs), report: { ...report, restore } };
  }

  /** New settings from a changed topic spec (retention now, segment capacity at the next roll). */
  reconfigure(config: Readonly<LogConfig>): void {
    this.log.reconfigure(config);
  }

  get config(): Readonly<LogConfig> {
    return this.log.config;
  }

  get name(): string {
    return this.log.name;
  }

  get highWatermark(): HighWatermark {
    return this.log.highWatermark;
  }

  get logStartOffset(): number {
    return this.log.logStartOffset;
  }

  /** The offset the next record written will get (written, not necessarily committed or published). */
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  get sizeBytes(): number {
    return this.log.sizeBytes;
  }

  /** The oldest offset on the local disk (below it, reads come from the store). */
  get localStartOffset(): number {
    return this.log.localStartOffset;
  }

  /** Closed segments waiting for their upload (see PartitionLog.persistCandidates). */
  persistCandidates(): PersistCandidate[] {
    return this.log.persistCandidates();
  }

  markPersisted(fragment: Fragment): boolean {
    return this.log.markPersisted(fragment);
  }

  takeExpiredFragments(): Fragment[] {
    return this.log.takeExpiredFragments();
  }

  fragmentViews(): FragmentView[] {
    return this.log.fragmentViews();
  }

  get segmentCount(): number {
    return this.log.segmentCount;
  }

  get writerStats(): Readonly<WriterStats> {
    return this.writer.stats;
  }

  /** Batches waiting for writer-queue space (backpressure in effect). */
  get blockedBatches(): number {
    return this.writer.blockedBatches;
  }

  append(batch: AppendBatch, ack: AckPolicyValue): Promise<AppendResult> {
    return this.writer.append(batch, ack);
  }

  /** `append` without a promise: `waiter` is told the outcome, possibly before this returns. */
  appendTo(batch: AppendBatch, ack: AckPolicyValue, waiter: AppendWaiter): void {
    this.writer.appendTo(batch, ack, waiter);
  }

  /** Hands each group written from now on to `gate`, acknowledging it only once committed (null: no gate). */
  setReplicationGate(gate: ReplicationGate | null): void {
    this.writer.setReplicationGate(gate);
  }

  /** Every in-sync replica holds the records below `offset` (see PartitionWriter.commitTo). */
  commitTo(offset: number): void {
    this.writer.commitTo(offset);
  }

  /**
   * Fails every waiter not yet answered: `unwritten` for batches never written, `written` for those
   * whose records stay in the log (see PartitionWriter.failUncommitted).
   */
  failUncommitted(unwritten: Error, written: Error): void {
    this.writer.failUncommitted(unwritten, written);
  }

  /**
   * A replica's write of a primary's group at `baseOffset` (see PartitionLog.writeStoredGroup for what
   * is refused). Resolves once written, or once fdatasync'ed too when `forced`. Not readable until
   * `publishCommitted` covers it. Refused (WriterModeError) while an `append` waits for its answer.
   */
  writeReplicated(baseOffset: number, stored: Buffer, count: number, forced: boolean): Promise<void> {
    // Through the writer: a turn's FORCED copies share one fdatasync, under the primary's cap.
    return new Promise((resolve, reject) =>
      this.writer.writeReplica(baseOffset, stored, count, forced, {
        appended: () => resolve(),
        failed: reject,
      }),
    );
  }

  /**
   * A replica's publish up to the primary's commit offset (see PartitionLog.publishCommitted). On a
   * former primary it also lets go of the groups its writer wrote and then failed (failUncommitted).
   */
  /** Records as written, committed or not (see PartitionLog.readWritten): what a replica is sent. */
  readWritten(offset: number, maxBytes: number): Promise<Buffer> {
    return this.log.readWritten(offset, maxBytes);
  }

  publishCommitted(offset: number): void {
    this.log.publishCommitted(offset);
    this.writer.commitTo(offset);
  }

  /**
   * Removes every record at or above `offset`, the log first, then the epoch history (a crash between
   * leaves entries past the log end, which the history drops when it opens). Refused, nothing
   * changed, while a batch appended here still waits for its answer (`failUncommitted` first), and
   * as PartitionLog.truncateTo refuses.
   */
  truncateTo(offset: number): void {
    this.writer.checkMayTruncate();
    this.log.truncateTo(offset);
    this.writer.forgetPast(offset);
    this.epochs.truncateTo(offset);
  }

  read(offset: number, maxBytes: number): Promise<ReadResult> {
    return this.log.read(offset, maxBytes);
  }

  /** `read` without waiting, when no disk read is needed (see PartitionLog.readNow); else null. */
  readNow(offset: number, maxBytes: number): ReadResult | null {
    return this.log.readNow(offset, maxBytes);
  }

  enforceRetention(nowMs?: number): number[] {
    return this.log.enforceRetention(nowMs);
  }

  /**
   * Deletes the partition (its topic was deleted): lets queued writes finish (their callers are
   * answered), then removes the files, each once no read in flight holds it.
   */
  async remove(): Promise<void> {
    await this.writer.close();
    this.log.removeFiles();
  }

  /** Lets queued writes finish, makes them durable, closes the files. */
  async close(): Promise<void> {
    await this.writer.close();
    this.log.close();
  }
}
