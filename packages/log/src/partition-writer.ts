import { AckPolicy, type AckPolicyValue, recordHeaderBytes } from '@booblik/protocol';
import { LogClosedError, RecordTooLargeError, StorageError } from './errors.js';
import { type Logger, silentLogger } from './logger.js';
import { type AppendBatch, PartitionLog } from './partition-log.js';

export interface AppendResult {
  /** Offset of the batch's first record; the rest follow in order. */
  baseOffset: number;
  /** The log's end when the batch was acknowledged (may exceed base + count). */
  logEndOffset: number;
}

interface Pending {
  batch: AppendBatch;
  storedBytes: number;
  ack: AckPolicyValue;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

/** Counters for metrics; monotonic. */
export interface WriterStats {
  groups: number;
  batches: number;
  records: number;
  bytes: number;
  /** fdatasync calls made because a member asked FORCED (flush-policy syncs are counted apart). */
  forcedSyncs: number;
  flushSyncs: number;
  storageErrors: number;
}

enum State {
  Idle,
  Scheduled,
  Writing,
}

/**
 * The single writer of one partition. Producers' batches wait in a bounded queue (a full queue makes
 * callers wait: memory stays bounded); each turn takes everything queued as one group, writes it
 * with one write, issues one fdatasync for the whole group if any member asked FORCED, acknowledges
 * every member, then publishes the new high watermark. Many producers share one disk barrier.
 */
export class PartitionWriter {
  readonly stats: WriterStats = {
    groups: 0,
    batches: 0,
    records: 0,
    bytes: 0,
    forcedSyncs: 0,
    flushSyncs: 0,
    storageErrors: 0,
  };
  private state = State.Idle;
  private accepting = true;
  /** Admitted batches: the next group. */
  private queue: Pending[] = [];
  private queuedBytes = 0;
  /** Batches waiting for queue space, in arrival order (none may overtake another). */
  private blocked: Pending[] = [];
  private recordsSinceFlush = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushInFlight: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  private readonly logger: Logger;

  constructor(
    readonly log: PartitionLog,
    options: { logger?: Logger } = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    if (log.config.flushEveryMs > 0) {
      this.flushTimer = setInterval(() => this.flushInBackground(), log.config.flushEveryMs);
      this.flushTimer.unref();
    }
  }

  /** Batches waiting for queue space right now (backpressure in effect). */
  get blockedBatches(): number {
    return this.blocked.length;
  }

  get queuedBatches(): number {
    return this.queue.length;
  }

  /**
   * Appends a batch. Resolves when the batch is in the log (WRITTEN, NONE) or on stable storage
   * (FORCED). Rejects with RecordTooLargeError (nothing written), StorageError or LogClosedError.
   */
  append(batch: AppendBatch, ack: AckPolicyValue): Promise<AppendResult> {
    if (!this.accepting) return Promise.reject(new LogClosedError(this.log.name));
    const storedBytes = PartitionLog.storedBytes(batch);
    const tooLarge = this.findTooLarge(batch, storedBytes);
    if (tooLarge !== null) return Promise.reject(tooLarge);
    return new Promise((resolve, reject) => {
      const pending: Pending = { batch, storedBytes, ack, resolve, reject };
      if (this.blocked.length > 0 || !this.fits(storedBytes)) {
        this.blocked.push(pending);
        return;
      }
      this.admit(pending);
    });
  }

  /** A record whose header and payload exceed a whole segment can never be stored: refuse the batch. */
  private findTooLarge(batch: AppendBatch, storedBytes: number): RecordTooLargeError | null {
    const max = this.log.config.segmentBytesMax;
    if (storedBytes <= max) return null;
    let pos = 0;
    for (let i = 0; i < batch.count; i++) {
      const size = batch.records.readInt32BE(pos);
      if (recordHeaderBytes + size > max) return new RecordTooLargeError(i, size, max);
      pos += 4 + size;
    }
    return null;
  }

  private fits(bytes: number): boolean {
    // An empty queue takes any batch, however large, or that batch would wait forever.
    return this.queuedBytes === 0 || this.queuedBytes + bytes <= this.log.config.writerQueueBytesMax;
  }

  private admit(pending: Pending): void {
    this.queue.push(pending);
    this.queuedBytes += pending.storedBytes;
    if (this.state === State.Idle) {
      this.state = State.Scheduled;
      // setImmediate runs after this turn's I/O callbacks: every request that arrived in this turn,
      // on any connection, joins the same group.
      setImmediate(() => void this.run());
    }
  }

  private admitBlocked(): void {
    while (this.blocked.length > 0 && this.fits(this.blocked[0]!.storedBytes))
      this.admit(this.blocked.shift()!);
  }

  private async run(): Promise<void> {
    this.state = State.Writing;
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      this.admitBlocked(); // they form the next group, written after this one is acknowledged
      await this.commit(group);
    }
    this.state = State.Idle;
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private async commit(group: Pending[]): Promise<void> {
    let bases: number[];
    try {
      bases = this.log.writeGroup(group.map((p) => p.batch));
    } catch (error) {
      this.stats.storageErrors++;
      this.logger.error(String((error as Error).message));
      for (const p of group) p.reject(error as Error);
      return;
    }
    let records = 0;
    let bytes = 0;
    let forced = false;
    for (const p of group) {
      records += p.batch.count;
      bytes += p.storedBytes;
      forced ||= p.ack === AckPolicy.FORCED;
    }
    this.stats.groups++;
    this.stats.batches += group.length;
    this.stats.records += records;
    this.stats.bytes += bytes;
    this.recordsSinceFlush += records;

    let syncError: Error | null = null;
    if (forced) {
      this.stats.forcedSyncs++;
      try {
        await this.log.sync();
        this.recordsSinceFlush = 0;
      } catch (error) {
        syncError = error as Error;
        this.stats.storageErrors++;
        this.logger.error(syncError.message);
      }
    } else if (
      this.log.config.flushEveryRecords > 0 &&
      this.recordsSinceFlush >= this.log.config.flushEveryRecords
    ) {
      this.flushInBackground();
    }

    const logEndOffset = this.log.logEndOffset;
    for (let i = 0; i < group.length; i++) {
      const p = group[i]!;
      // A failed barrier fails only those who asked for the barrier; the records are in the log.
      if (syncError !== null && p.ack === AckPolicy.FORCED) p.reject(syncError);
      else p.resolve({ baseOffset: bases[i]!, logEndOffset });
    }
    this.log.publish();
  }

  /** The flush policy's fdatasync: bounds what WRITTEN can lose, without holding any acknowledgement. */
  private flushInBackground(): void {
    if (this.flushInFlight !== null || !this.log.hasUnsynced) return;
    this.recordsSinceFlush = 0;
    this.stats.flushSyncs++;
    this.flushInFlight = this.log
      .sync()
      .catch((error: unknown) => {
        this.stats.storageErrors++;
        this.logger.error(`${this.log.name}: background flush failed: ${String(error)}`);
      })
      .finally(() => {
        this.flushInFlight = null;
      });
  }

  /** Resolves once everything queued so far is written and acknowledged. */
  private whenIdle(): Promise<void> {
    if (this.state === State.Idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking batches, lets queued ones finish, and makes everything durable. Batches offered after
   * this is called are refused with LogClosedError.
   */
  async close(): Promise<void> {
    this.accepting = false;
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.whenIdle();
    await this.flushInFlight;
    if (!this.log.hasUnsynced) return;
    try {
      await this.log.sync();
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
      this.logger.error(`${this.log.name}: final flush failed: ${error.message}`);
    }
  }
}
