import { type Clock, type TimerHandle, unrefTimer } from '@booblik/protocol';
import type { Logger } from '../logger.js';
import type { PartitionLog } from '../partition-log.js';
import type { WriterStats } from './types.js';

/**
 * The flush policy's fdatasync (`flushEveryMs`, `flushEveryRecords`): bounds what WRITTEN can lose,
 * without holding any acknowledgement. At most one runs at a time; a FORCED barrier counts as one.
 */
export class FlushPolicy {
  private recordsSinceFlush = 0;
  private timer: TimerHandle | undefined;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly log: PartitionLog,
    private readonly clock: Clock,
    private readonly stats: WriterStats,
    private readonly logger: Logger,
  ) {
    if (log.config.flushEveryMs > 0) this.arm(log.config.flushEveryMs);
  }

  private arm(everyMs: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.arm(everyMs);
      this.flushInBackground();
    }, everyMs);
    unrefTimer(this.timer);
  }

  /** Records written without a barrier: a flush starts once `flushEveryRecords` of them add up. */
  recordsWritten(records: number): void {
    this.recordsSinceFlush += records;
    const every = this.log.config.flushEveryRecords;
    if (every > 0 && this.recordsSinceFlush >= every) this.flushInBackground();
  }

  /** A FORCED barrier started: it covers everything written so far. */
  barrierStarted(): void {
    this.recordsSinceFlush = 0;
  }

  /** Stops the timer; resolves once a flush running now has ended. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  private flushInBackground(): void {
    if (this.inFlight !== null || !this.log.hasUnsynced) return;
    this.recordsSinceFlush = 0;
    this.stats.flushSyncs++;
    this.inFlight = this.log
      .sync()
      .catch((error: unknown) => {
        this.stats.storageErrors++;
        this.logger.error(`${this.log.name}: background flush failed: ${String(error)}`);
      })
      .finally(() => {
        this.inFlight = null;
      });
  }
}
