import type { AckPolicyValue } from '@booblik/protocol';
import type { LogConfig } from './config.js';
import type { Fragment, FragmentView, PersistCandidate, RemoteHistory } from './fragment.js';
import type { HighWatermark } from './high-watermark.js';
import type { Logger } from './logger.js';
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
  type WriterStats,
} from './partition-writer.js';
import { partitionDirName } from './segment-name.js';
import { sharedWorkerScanner } from './worker-scanner.js';

/**
 * One partition as the broker sees it: appends go through the writer (group commit), reads and the
 * high watermark come from the log. This is the unit a registry looks up by (topic, partition); a
 * replicated partition will later sit behind the same surface.
 */
export class Partition {
  private constructor(
    readonly topic: string,
    readonly id: number,
    private readonly log: PartitionLog,
    private readonly writer: PartitionWriter,
  ) {}

  /** Opens `<dataDir>/<topic>-<partition>/`, recovering every segment first. */
  static open(
    dataDir: string,
    topic: string,
    id: number,
    config: Readonly<LogConfig>,
    options: { logger?: Logger; now?: () => number; remote?: RemoteHistory } = {},
  ): { partition: Partition; report: OpenReport } {
    const name = partitionDirName(topic, id);
    const { log, report } = PartitionLog.open(`${dataDir}/${name}`, name, config, options);
    const writer = new PartitionWriter(log, options.logger ? { logger: options.logger } : {});
    return { partition: new Partition(topic, id, log, writer), report };
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
    options: { logger?: Logger; now?: () => number; scan?: SegmentScanner; remote?: RemoteHistory } = {},
  ): Promise<{ partition: Partition; report: OpenReport }> {
    const name = partitionDirName(topic, id);
    const { log, report } = await PartitionLog.openAsync(`${dataDir}/${name}`, name, config, {
      ...options,
      scan: options.scan ?? sharedWorkerScanner.scan,
    });
    const writer = new PartitionWriter(log, options.logger ? { logger: options.logger } : {});
    return { partition: new Partition(topic, id, log, writer), report };
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
