import {
  AckPolicy,
  type AckPolicyValue,
  fetchableRecordBytesMax,
  recordHeaderBytes,
} from '@booblik/protocol';
import { LogClosedError, OffsetMismatchError, RecordTooLargeError, StorageError } from './errors.js';
import { type Logger, silentLogger } from './logger.js';
import { type AppendBatch, PartitionLog } from './partition-log.js';

export interface AppendResult {
  /** Offset of the batch's first record; the rest follow in order. */
  baseOffset: number;
  /** The log's end when the batch was acknowledged (may exceed base + count). */
  logEndOffset: number;
}

/**
 * Told once how an append ended: in the log (or on stable storage, for FORCED), or refused. It may be
 * told before `appendTo` returns (a lone WRITTEN batch is written at once), so a caller sets up
 * whatever the answer needs first. No promise, no closure per batch: the broker's answer path.
 */
export interface AppendWaiter {
  appended(baseOffset: number, logEndOffset: number): void;
  failed(error: Error): void;
}

/**
 * Where a primary's writer hands each group for replication. While one is set, a group is
 * acknowledged and published only once it is durable locally (as ever) and the pipeline has called
 * `commitTo` with an offset at or past its end.
 */
export interface ReplicationGate {
  /**
   * Called right after a group is written locally, in write order, with its stored bytes (the log's
   * own buffer: not to be changed). May be called from inside `appendTo` (a lone batch is written at
   * once), so it must not append to this writer.
   */
  groupWritten(baseOffset: number, stored: Buffer, count: number, forced: boolean): void;
}

interface Pending {
  batch: AppendBatch;
  storedBytes: number;
  ack: AckPolicyValue;
  waiter: AppendWaiter;
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

/**
 * fdatasync calls one partition may have running at once. Concurrent barriers on this kind of disk
 * complete more per second than one at a time (measured here: 1 at a time ~1,650/s, 2 ~3,300/s,
 * 4 ~5,100/s), so a group need not wait for the previous group's barrier before starting its own.
 * Kept below the libuv thread pool's size, which reads from disk share.
 */
export const SYNCS_IN_FLIGHT_MAX = 3;

/**
 * How long an idle disk may wait for the FORCED producers just acknowledged to send again, so that
 * they share the next barrier instead of splitting it: the hold ends as soon as as many FORCED
 * batches have arrived as were acknowledged, and this only bounds it when some producer does not
 * come back. Over TCP the 8 producers of the benchmark's W3 come back over 100-300 µs: a barrier
 * started at the first of them carried 2.5 records on average, this one 8.0 (docs/benchmarks.md,
 * "Per-request cost"). One millisecond is also the timer's resolution.
 */
export const FORCED_GATHER_MS_MAX = 1;

/** Schedules a microtask without a promise per call to resolve. */
const settledPromise = Promise.resolve();

/** A group written to the log and waiting to be acknowledged, in write order. */
interface Group {
  members: Pending[];
  bases: number[];
  /** The log's end right after this group: what is published when it is acknowledged. */
  endOffset: number;
  /** Members that asked FORCED: what its barrier covers. */
  forced: number;
  /** False until its barrier (if it asked for one) has completed. */
  durable: boolean;
  syncError: Error | null;
  /** Written while a replication gate was set: acknowledged only once committed. */
  gated: boolean;
}

/**
 * The single writer of one partition. Producers' batches wait in a bounded queue (a full queue makes
 * callers wait: memory stays bounded); each turn takes everything queued as one group and writes it
 * with one write. A group with a FORCED member gets one fdatasync for all its members, and up to
 * SYNCS_IN_FLIGHT_MAX groups' barriers run at once, as many as the FORCED producers waiting call
 * for (see `groupMayStart`). Groups are acknowledged strictly in write order, each once its own
 * barrier is done, the high watermark published just before each acknowledgement. Many producers
 * share one disk barrier.
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
  private scheduled = false;
  /**
   * A lone batch was written at once in this callback (a socket read's frames, say); the rest of the
   * callback's batches group. Cleared at the end of the callback (a microtask), not of the loop's
   * turn: a setImmediate per lone write cost the check phase and its bookkeeping on every one-record
   * request (~7% of the broker's CPU time on one awaited record at a time), and a nextTick a runtime
   * call for its bookkeeping object.
   */
  private wroteAtOnce = false;
  private readonly clearWroteAtOnce = (): void => {
    this.wroteAtOnce = false;
  };
  /** Inside `pump`: a batch admitted from the blocked list must queue behind the group being written. */
  private pumping = false;
  private accepting = true;
  /** Admitted batches: the next group. */
  private queue: Pending[] = [];
  private queuedBytes = 0;
  /** Batches waiting for queue space, in arrival order (none may overtake another). */
  private blocked: Pending[] = [];
  /** Written, not yet acknowledged, in write order. */
  private groups: Group[] = [];
  private syncsInFlight = 0;
  /** FORCED batches in the queue, and under barriers now running. */
  private queuedForced = 0;
  private forcedInFlight = 0;
  /**
   * FORCED batches acknowledged whose producers are expected to send again soon (any FORCED arrival
   * counts against it: producers are not told apart), and when the last of them were acknowledged.
   */
  private forcedReturning = 0;
  private forcedAckedAtMs = 0;
  private gatherTimer: NodeJS.Timeout | undefined;
  private recordsSinceFlush = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushInFlight: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  private readonly logger: Logger;
  private gate: ReplicationGate | null = null;
  /** Every in-sync replica holds the records below this (see `commitTo`). */
  private committedOffset = 0;

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

  /**
   * Sets (or with null, clears) where written groups are handed for replication. Groups written
   * while a gate was set still wait for `commitTo` after it is cleared: clearing it never
   * acknowledges what the replicas may not hold.
   */
  setReplicationGate(gate: ReplicationGate | null): void {
    this.gate = gate;
  }

  /**
   * Every in-sync replica holds the records below `offset`: the gated groups ending at or before it
   * are acknowledged (and published) in write order, each once durable locally too. Any offset may
   * be given; a lower one than before changes nothing.
   */
  commitTo(offset: number): void {
    if (offset <= this.committedOffset) return;
    this.committedOffset = offset;
    // From inside an acknowledgement the running loop sees the new offset itself.
    if (!this.pumping) this.pump();
  }

  /**
   * Tells every waiter not yet answered, now, that its batch was not acknowledged: those of batches
   * queued or blocked, which are never written, get `unwritten` (a refusal: nothing was stored);
   * those of groups written but not acknowledged get `written`, since their records stay in the
   * log and a later `commitTo` that covers them publishes them (an outcome the caller cannot know).
   */
  failUncommitted(unwritten: Error, written: Error): void {
    const told: [AppendWaiter, Error][] = [];
    for (const group of this.groups) {
      for (const p of group.members) told.push([p.waiter, written]);
      group.members = [];
      group.bases = [];
    }
    for (const p of this.queue) told.push([p.waiter, unwritten]);
    for (const p of this.blocked) told.push([p.waiter, unwritten]);
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedForced = 0;
    this.blocked = [];
    for (const [waiter, error] of told) waiter.failed(error);
  }

  /**
   * Refuses (Error, nothing changed) a truncation while any batch still waits for its answer:
   * `failUncommitted` first. The log is cut between this and `forgetPast`.
   */
  checkMayTruncate(): void {
    const waiting =
      this.queue.length + this.blocked.length + this.groups.reduce((n, g) => n + g.members.length, 0);
    if (waiting > 0) {
      throw new Error(
        `${this.log.name}: ${waiting} batch(es) still wait for an answer; fail them (failUncommitted) before truncating`,
      );
    }
  }

  /** The log was cut at `offset`: groups written past it are gone and are never acknowledged. */
  forgetPast(offset: number): void {
    this.groups = this.groups.filter((g) => g.endOffset <= offset);
    if (this.committedOffset > offset) this.committedOffset = offset;
    if (this.idleWaiters.length > 0 && this.isIdle) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Batches waiting for queue space right now (backpressure in effect). */
  get blockedBatches(): number {
    return this.blocked.length;
  }

  /**
   * Appends a batch. Resolves when the batch is in the log (WRITTEN, NONE) or on stable storage
   * (FORCED). Rejects with RecordTooLargeError (nothing written), StorageError or LogClosedError.
   */
  append(batch: AppendBatch, ack: AckPolicyValue): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.appendTo(batch, ack, {
        appended: (baseOffset, logEndOffset) => resolve({ baseOffset, logEndOffset }),
        failed: reject,
      });
    });
  }

  /** `append` for a caller that keeps its own state: `waiter` is told the outcome, maybe at once. */
  appendTo(batch: AppendBatch, ack: AckPolicyValue, waiter: AppendWaiter): void {
    if (!this.accepting) {
      waiter.failed(new LogClosedError(this.log.name));
      return;
    }
    const storedBytes = PartitionLog.storedBytes(batch);
    const tooLarge = this.findTooLarge(batch, storedBytes);
    if (tooLarge !== null) {
      waiter.failed(tooLarge);
      return;
    }
    const pending: Pending = { batch, storedBytes, ack, waiter };
    if (this.blocked.length > 0 || !this.fits(storedBytes)) {
      this.blocked.push(pending);
      return;
    }
    this.admit(pending);
  }

  /**
   * A record whose header and payload exceed a whole segment can never be stored, and one beyond a
   * FETCH answer could never be read: refuse the batch.
   */
  private findTooLarge(batch: AppendBatch, storedBytes: number): RecordTooLargeError | null {
    const max = Math.min(this.log.config.segmentBytesMax, fetchableRecordBytesMax);
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
    if (pending.ack === AckPolicy.FORCED) {
      this.queuedForced++;
      if (this.forcedReturning > 0) this.forcedReturning--;
    }
    if (this.canWriteNow(pending)) {
      // A lone request that needs no barrier is written at once: one trip less through the event
      // loop, which is what a caught-up producer or an idle broker waits on. Later requests of this
      // same callback still gather into one group below, with everything else of this turn.
      this.wroteAtOnce = true;
      settledPromise.then(this.clearWroteAtOnce);
      this.pump();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      // setImmediate runs after this turn's I/O callbacks: every request that arrived in this turn,
      // on any connection, joins the same group.
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
  }

  private canWriteNow(pending: Pending): boolean {
    return (
      pending.ack !== AckPolicy.FORCED &&
      !this.wroteAtOnce &&
      !this.pumping &&
      !this.scheduled &&
      this.queue.length === 1 &&
      this.groups.length === 0 &&
      this.syncsInFlight === 0
    );
  }

  private admitBlocked(): void {
    while (this.blocked.length > 0 && this.fits(this.blocked[0]!.storedBytes))
      this.admit(this.blocked.shift()!);
  }

  /**
   * Writes queued groups while a barrier is free, then acknowledges whatever is ready. Waiters are
   * told synchronously, so one may append again from inside: that batch queues for the next turn
   * (`pumping` is still set) instead of writing from inside this loop.
   */
  private pump(): void {
    this.pumping = true;
    this.expectReturningProducers();
    while (this.queue.length > 0 && this.groupMayStart()) {
      const members = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      this.queuedForced = 0;
      this.admitBlocked(); // they form the next group
      this.write(members);
    }
    this.acknowledge();
    this.pumping = false;
  }

  /** The FORCED producers about to be acknowledged will likely send again: the next barrier waits for them. */
  private expectReturningProducers(): void {
    let forced = 0;
    for (let i = 0; i < this.groups.length && this.isReady(this.groups[i]!); i++)
      forced += this.groups[i]!.forced;
    if (forced === 0) return;
    this.forcedReturning += forced;
    this.forcedAckedAtMs = performance.now();
  }

  /**
   * Whether the queue may be written as a group now. Batches that need no barrier go whenever a
   * barrier slot is free. A FORCED group adapts to how many FORCED producers wait: while barriers
   * run, another starts only for a group at least as large as all of theirs together (a burst that
   * earns its own barrier; anything smaller waits and joins the next); on an idle disk, it starts
   * once the producers just acknowledged are back, or FORCED_GATHER_MS_MAX after their
   * acknowledgement, whichever is first. A lone producer never waits: it is the one expected back.
   */
  private groupMayStart(): boolean {
    if (this.syncsInFlight >= SYNCS_IN_FLIGHT_MAX) return false;
    if (this.queuedForced === 0 || !this.accepting) return true;
    if (this.syncsInFlight > 0) return this.queuedForced >= this.forcedInFlight;
    if (this.forcedReturning === 0 || this.queuedBytes * 2 > this.log.config.writerQueueBytesMax) return true;
    const heldMs = performance.now() - this.forcedAckedAtMs;
    if (heldMs >= FORCED_GATHER_MS_MAX) {
      this.forcedReturning = 0; // they are not coming back soon: stop expecting them
      return true;
    }
    if (this.gatherTimer === undefined) {
      this.gatherTimer = setTimeout(() => {
        this.gatherTimer = undefined;
        this.pump();
      }, FORCED_GATHER_MS_MAX - heldMs);
    }
    return false;
  }

  private write(candidates: Pending[]): void {
    const members = this.withoutMismatches(candidates);
    if (members.length === 0) return;
    let bases: number[];
    try {
      bases = this.log.writeGroup(members.map((p) => p.batch));
    } catch (error) {
      // Nothing of the group was kept (the log cut it off again): fail exactly its members.
      this.stats.storageErrors++;
      this.logger.error(String((error as Error).message));
      for (const p of members) p.waiter.failed(error as Error);
      return;
    }
    let records = 0;
    let forcedMembers = 0;
    for (const p of members) {
      records += p.batch.count;
      this.stats.bytes += p.storedBytes;
      if (p.ack === AckPolicy.FORCED) forcedMembers++;
    }
    const forced = forcedMembers > 0;
    this.stats.groups++;
    this.stats.batches += members.length;
    this.stats.records += records;
    this.recordsSinceFlush += records;
    const group: Group = {
      members,
      bases,
      endOffset: this.log.logEndOffset,
      forced: forcedMembers,
      durable: !forced,
      syncError: null,
      gated: this.gate !== null,
    };
    this.groups.push(group);
    if (forced) {
      this.stats.forcedSyncs++;
      this.syncsInFlight++;
      this.forcedInFlight += forcedMembers;
      this.recordsSinceFlush = 0;
      // The barrier covers everything written to these files so far, this group included.
      this.log.sync().then(
        () => this.barrierDone(group, null),
        (error: Error) => this.barrierDone(group, error),
      );
    } else if (
      this.log.config.flushEveryRecords > 0 &&
      this.recordsSinceFlush >= this.log.config.flushEveryRecords
    ) {
      this.flushInBackground();
    }
    // After the local barrier has started: the replicas' writes and this disk's run side by side.
    this.gate?.groupWritten(bases[0]!, this.log.lastWrittenStored, records, forced);
  }

  /**
   * Refuses the batches whose expected offset is not where they would land (checked here, at write
   * time, in queue order: the only moment the answer is certain), and keeps the rest.
   */
  private withoutMismatches(candidates: Pending[]): Pending[] {
    let end = this.log.logEndOffset;
    let kept: Pending[] | null = null;
    for (let i = 0; i < candidates.length; i++) {
      const p = candidates[i]!;
      const expected = p.batch.expectedOffset;
      if (expected !== undefined && expected >= 0 && expected !== end) {
        kept ??= candidates.slice(0, i);
        p.waiter.failed(new OffsetMismatchError(expected, end));
        continue;
      }
      end += p.batch.count;
      kept?.push(p);
    }
    return kept ?? candidates;
  }

  private barrierDone(group: Group, error: Error | null): void {
    this.syncsInFlight--;
    this.forcedInFlight -= group.forced;
    group.durable = true;
    if (error !== null) {
      group.syncError = error;
      this.stats.storageErrors++;
      this.logger.error(error.message);
    }
    this.pump();
  }

  /**
   * Acknowledges groups in write order while the oldest is durable, each published first: waiters are
   * told synchronously, and what a producer has been told is written must already be readable.
   */
  private acknowledge(): void {
    while (this.groups.length > 0 && this.isReady(this.groups[0]!)) {
      const group = this.groups.shift()!;
      this.log.publish(group.endOffset);
      for (let i = 0; i < group.members.length; i++) {
        const p = group.members[i]!;
        // A failed barrier fails only those who asked for the barrier; the records are in the log.
        if (group.syncError !== null && p.ack === AckPolicy.FORCED) p.waiter.failed(group.syncError);
        else p.waiter.appended(group.bases[i]!, group.endOffset);
      }
    }
    if (this.idleWaiters.length > 0 && this.isIdle) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Durable locally, and held by every in-sync replica when it was written under a gate. */
  private isReady(group: Group): boolean {
    return group.durable && (!group.gated || group.endOffset <= this.committedOffset);
  }

  private get isIdle(): boolean {
    return (
      !this.scheduled &&
      this.gatherTimer === undefined &&
      this.queue.length === 0 &&
      this.groups.length === 0 &&
      this.syncsInFlight === 0
    );
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
    if (this.isIdle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking batches, lets queued ones finish, and makes everything durable. Batches offered after
   * this is called are refused with LogClosedError. Groups written under a replication gate are
   * waited for too: call `commitTo` or `failUncommitted` for them, or this never resolves.
   */
  async close(): Promise<void> {
    this.accepting = false;
    if (this.groups.every((g) => g.gated && g.members.length === 0)) {
      // Failed already, they wait only for a commit a closing partition never gets; their records
      // stay in the log, and the next open decides what of them is readable.
      this.groups = [];
    }
    if (this.flushTimer) clearInterval(this.flushTimer);
    if (this.gatherTimer !== undefined) {
      // Nobody else is coming: write what is held now.
      clearTimeout(this.gatherTimer);
      this.gatherTimer = undefined;
      this.pump();
    }
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
