import { AckPolicy, type AckPolicyValue, type Clock, InvariantError, systemClock } from '@booblik/protocol';
import { LogClosedError, StorageError } from './errors.js';
import { type Logger, silentLogger } from './logger.js';
import { type AppendBatch, PartitionLog } from './partition-log.js';
import { findTooLarge, withoutMismatches } from './writer/admission.js';
import { BatchQueue } from './writer/batch-queue.js';
import { FlushPolicy } from './writer/flush-policy.js';
import { ForcedGathering } from './writer/forced-gathering.js';
import { answerMembers, type GroupState, mayBeAnswered, moveGroup } from './writer/group-state.js';
import { brokenBeforeAcknowledging } from './writer/invariants.js';
import { ReplicaForcedWrites } from './writer/replica-writes.js';
import {
  type AppendResult,
  type AppendWaiter,
  type Group,
  newWriterStats,
  type Pending,
  type ReplicationGate,
  SYNCS_IN_FLIGHT_MAX,
  type WriterStats,
} from './writer/types.js';
import {
  WriterLifecycle,
  type WriterMode,
  WriterModeError,
  type WriterState,
} from './writer/writer-state.js';

export type { AppendResult, AppendWaiter, ReplicationGate, WriterStats } from './writer/types.js';
export { FORCED_GATHER_MS_MAX, SYNCS_IN_FLIGHT_MAX } from './writer/types.js';
export { type WriterMode, WriterModeError, type WriterState } from './writer/writer-state.js';

/** Schedules a microtask without a promise per call to resolve. */
const settledPromise = Promise.resolve();

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
  readonly stats: WriterStats = newWriterStats();
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
  private readonly lifecycle: WriterLifecycle;
  private mode: WriterMode = 'primary';
  /** A replica's FORCED writes, written and waiting for the next barrier: one group per barrier. */
  private readonly replicaForced = new ReplicaForcedWrites();
  private readonly queue: BatchQueue;
  /** Written, not yet acknowledged, in write order. */
  private groups: Group[] = [];
  private syncsInFlight = 0;
  /** FORCED batches under barriers now running. */
  private forcedInFlight = 0;
  private readonly gathering: ForcedGathering;
  private readonly flush: FlushPolicy;
  private readonly clock: Clock;
  private idleWaiters: (() => void)[] = [];
  private readonly logger: Logger;
  private gate: ReplicationGate | null = null;
  /** Every in-sync replica holds the records below this (see `commitTo`). */
  private committedOffset = 0;
  /** The end of the primary's group acknowledged last: the high watermark it published. */
  private acknowledgedEnd = 0;

  constructor(
    readonly log: PartitionLog,
    options: { logger?: Logger; clock?: Clock } = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.lifecycle = new WriterLifecycle(log.name);
    this.queue = new BatchQueue(log);
    this.gathering = new ForcedGathering(this.clock, () => this.pump());
    this.flush = new FlushPolicy(log, this.clock, this.stats, this.logger);
  }

  /** Where the writer is in its lifecycle (see WriterState). */
  get state(): WriterState {
    return this.lifecycle.state;
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
    for (const p of this.queue.drain()) told.push([p.waiter, unwritten]);
    for (const [waiter, error] of told) waiter.failed(error);
  }

  /**
   * Refuses (Error, nothing changed) a truncation while any batch still waits for its answer:
   * `failUncommitted` first. The log is cut between this and `forgetPast`.
   */
  checkMayTruncate(): void {
    // A replica's waiters only wait for a barrier, which covers the cut log as well.
    const waiting = this.mode === 'replica' ? 0 : this.waitingForAnswer;
    if (waiting > 0) {
      throw new Error(
        `${this.log.name}: ${waiting} batch(es) still wait for an answer; fail them (failUncommitted) before truncating`,
      );
    }
  }

  /** The log was cut at `offset`: groups written past it are gone and are never acknowledged. */
  forgetPast(offset: number): void {
    this.groups = this.groups.filter((g) => g.replica || g.endOffset <= offset);
    if (this.committedOffset > offset) this.committedOffset = offset;
    if (this.acknowledgedEnd > offset) this.acknowledgedEnd = offset;
    if (this.idleWaiters.length > 0 && this.isIdle) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Batches waiting for queue space right now (backpressure in effect). */
  get blockedBatches(): number {
    return this.queue.blocked;
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
    const refused = this.refusal('primary');
    if (refused !== null) {
      waiter.failed(refused);
      return;
    }
    const storedBytes = PartitionLog.storedBytes(batch);
    const tooLarge = findTooLarge(batch, storedBytes, this.log.config.segmentBytesMax);
    if (tooLarge !== null) {
      waiter.failed(tooLarge);
      return;
    }
    const pending: Pending = { batch, storedBytes, ack, waiter };
    if (this.queue.offer(pending)) this.admitted(pending);
  }

  /**
   * A replica's write of the primary's group at `baseOffset`, the log end (OffsetMismatchError, nothing
   * stored, otherwise). Written at once; a FORCED one is told once a barrier covers it, one barrier for
   * the FORCED writes of one callback, within the primary's cap. `publishCommitted` publishes them,
   * not the writer.
   */
  writeReplica(
    baseOffset: number,
    stored: Buffer,
    count: number,
    forced: boolean,
    waiter: AppendWaiter,
  ): void {
    let refused = this.refusal('replica');
    try {
      if (refused === null) this.log.writeStoredGroup(baseOffset, stored, count);
    } catch (error) {
      refused = error as Error;
    }
    if (refused !== null) {
      waiter.failed(refused);
      return;
    }
    if (!forced) {
      this.flush.recordsWritten(count);
      waiter.appended(baseOffset, this.log.logEndOffset);
      return;
    }
    this.replicaForced.add(baseOffset, waiter);
    // Started at the end of this callback, not on the loop's next turn: a replica's writes all come
    // over its primary's one connection, so the frames of one read still share the barrier. (A
    // commit offset that rises with the frame starts it sooner, through `commitTo`.)
    if (this.replicaForced.count === 1) settledPromise.then(this.syncReplicaGroup);
  }

  /** Why a write of `mode` is refused now, or null (see WriterMode). */
  private refusal(mode: WriterMode): Error | null {
    if (this.lifecycle.state !== 'accepting') return new LogClosedError(this.log.name);
    return this.mayTake(mode) ? null : new WriterModeError(this.log.name, mode, this.mode);
  }

  private get waitingForAnswer(): number {
    return this.queue.length + this.queue.blocked + this.groups.reduce((n, g) => n + g.members.length, 0);
  }

  /** Whether a write of `mode` may be taken now; switches to it when nothing of the other waits. */
  private mayTake(mode: WriterMode): boolean {
    if (this.mode === mode) return true;
    if (this.waitingForAnswer + this.replicaForced.count > 0) return false;
    // A former primary's failed groups wait only for a commit that now comes as a replica's publish.
    this.groups = [];
    this.mode = mode;
    return true;
  }

  /** Starts the barrier of the replica's FORCED writes taken so far, when one is free. */
  private readonly syncReplicaGroup = (): void => {
    if (this.replicaForced.count === 0 || this.syncsInFlight >= SYNCS_IN_FLIGHT_MAX) return;
    const group = this.replicaForced.takeGroup(this.log.logEndOffset);
    this.groups.push(group);
    this.startBarrier(group);
  };

  private admitted(pending: Pending): void {
    if (pending.ack === AckPolicy.FORCED) this.gathering.forcedArrived();
    if (this.canWriteNow(pending)) {
      // A lone request that needs no barrier is written at once: one trip less through the event
      // loop, which is what a caught-up producer or an idle broker waits on. Later requests of this
      // same callback still gather into one group below, with everything else of this turn.
      this.wroteAtOnce = true;
      settledPromise.then(this.clearWroteAtOnce);
      this.pump();
      return;
    }
    this.scheduleTurn();
  }

  /**
   * setImmediate runs after this turn's I/O callbacks: every request that arrived in this turn, on
   * any connection, joins the same group.
   */
  private scheduleTurn(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.scheduledTurn);
  }

  private readonly scheduledTurn = (): void => {
    this.scheduled = false;
    this.pump();
  };

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
    for (let p = this.queue.nextFitting(); p !== undefined; p = this.queue.nextFitting()) {
      this.queue.admit(p);
      this.admitted(p);
    }
  }

  /**
   * Writes queued groups while a barrier is free, then acknowledges whatever is ready. Waiters are
   * told synchronously, so one may append again from inside: that batch queues for the next turn
   * (`pumping` is still set) instead of writing from inside this loop.
   */
  private pump(): void {
    this.pumping = true;
    // The FORCED producers about to be acknowledged will likely send again: the next barrier waits for
    // them. A replica's copies have no producer here to come back.
    let forced = 0;
    for (let i = 0; i < this.groups.length && this.isReady(this.groups[i]!); i++)
      if (!this.groups[i]!.replica) forced += this.groups[i]!.forced;
    this.gathering.acknowledged(forced);
    this.syncReplicaGroup();
    while (
      this.queue.length > 0 &&
      this.gathering.groupMayStart(
        this.syncsInFlight,
        this.queue.forced,
        this.forcedInFlight,
        this.lifecycle.state === 'accepting',
        this.queue.halfFull,
      )
    ) {
      const members = this.queue.take();
      this.admitBlocked(); // they form the next group
      this.write(members);
    }
    this.acknowledge();
    this.pumping = false;
  }

  private write(candidates: Pending[]): void {
    const members = withoutMismatches(candidates, this.log.logEndOffset);
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
    const group: Group = {
      members,
      bases,
      endOffset: this.log.logEndOffset,
      forced: forcedMembers,
      state: 'written',
      syncError: null,
      underGate: this.gate !== null,
      replica: false,
    };
    this.groups.push(group);
    if (forced) {
      this.startBarrier(group);
    } else {
      this.settle(group, 'durable');
      this.flush.recordsWritten(records);
    }
    // After the local barrier has started: the replicas' writes and this disk's run side by side.
    this.gate?.groupWritten(bases[0]!, this.log.lastWrittenStored, records, forced);
  }

  private startBarrier(group: Group): void {
    if (!this.moved(group, 'syncing')) return;
    if (!group.replica) this.stats.forcedSyncs++;
    this.syncsInFlight++;
    this.forcedInFlight += group.forced;
    this.flush.barrierStarted();
    // The barrier covers everything written to these files so far, this group included.
    this.log.sync().then(
      () => this.barrierDone(group, null),
      (error: Error) => this.barrierDone(group, error),
    );
  }

  private barrierDone(group: Group, error: Error | null): void {
    this.syncsInFlight--;
    this.forcedInFlight -= group.forced;
    if (error !== null) {
      group.syncError = error;
      this.stats.storageErrors++;
      this.logger.error(error.message);
    }
    this.settle(group, error === null ? 'durable' : 'failed');
    this.pump();
  }

  /** Done with the disk: held by the gate if written under one and not yet committed. */
  private settle(group: Group, to: 'durable' | 'failed'): void {
    if (this.moved(group, to) && group.underGate && group.endOffset > this.committedOffset)
      this.moved(group, 'gated');
  }

  /** Moves `group` on; a move its states do not allow is a bug that stops the writer (false). */
  private moved(group: Group, to: GroupState): boolean {
    try {
      moveGroup(this.log.name, group, to);
      return true;
    } catch (error) {
      if (!(error instanceof InvariantError)) throw error;
      this.stop(error);
      return false;
    }
  }

  /**
   * Acknowledges groups in write order while the oldest is durable, each published first: waiters are
   * told synchronously, and what a producer has been told is written must already be readable.
   */
  private acknowledge(): void {
    while (this.groups.length > 0 && this.isReady(this.groups[0]!)) {
      const group = this.groups[0]!;
      // Carrying on past a broken invariant could lose records: the writer stops instead.
      const broken = brokenBeforeAcknowledging(this.log, group, this.acknowledgedEnd);
      if (broken !== null) this.stop(broken);
      if (broken !== null || !this.moved(group, 'answered')) return;
      this.groups.shift();
      if (!group.replica) {
        this.acknowledgedEnd = group.endOffset;
        this.log.publish(group.endOffset);
      }
      answerMembers(group);
    }
    if (this.idleWaiters.length > 0 && this.isIdle) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** A broken invariant: refuses everything from now on, fails what waits, acknowledges nothing more. */
  private stop(broken: InvariantError): void {
    this.logger.error(broken.message);
    if (this.lifecycle.state === 'accepting') this.lifecycle.moveTo('closing');
    this.failUncommitted(broken, broken);
    this.groups = [];
  }

  private isReady(group: Group): boolean {
    return mayBeAnswered(group, this.committedOffset);
  }

  private get isIdle(): boolean {
    return (
      !this.scheduled &&
      !this.gathering.holding &&
      this.queue.length === 0 &&
      this.replicaForced.count === 0 &&
      this.groups.length === 0 &&
      this.syncsInFlight === 0
    );
  }

  /**
   * Stops taking batches, lets queued ones finish, and makes everything durable. Batches offered after
   * this is called are refused with LogClosedError. Groups written under a replication gate are
   * waited for too: call `commitTo` or `failUncommitted` for them, or this never resolves.
   */
  async close(): Promise<void> {
    if (this.lifecycle.state === 'accepting') this.lifecycle.moveTo('closing');
    if (this.groups.every((g) => g.underGate && g.members.length === 0)) {
      // Failed already, they wait only for a commit a closing partition never gets; their records
      // stay in the log, and the next open decides what of them is readable.
      this.groups = [];
    }
    const flushStopped = this.flush.stop();
    // Nobody else is coming: write what is held now.
    if (this.gathering.stop()) this.pump();
    await (this.isIdle ? undefined : new Promise<void>((resolve) => this.idleWaiters.push(resolve)));
    await flushStopped;
    if (this.log.hasUnsynced) {
      try {
        await this.log.sync();
      } catch (error) {
        if (!(error instanceof StorageError)) throw error;
        this.logger.error(`${this.log.name}: final flush failed: ${error.message}`);
      }
    }
    if (this.lifecycle.state === 'closing') this.lifecycle.moveTo('closed');
  }
}
