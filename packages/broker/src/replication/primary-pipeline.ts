import type { OwnerEntry } from '@booblik/cluster';
import type { Partition, ReplicationGate } from '@booblik/log';
import { type Clock, InvariantError, systemClock, type TimerHandle, unrefTimer } from '@booblik/protocol';
import type { PeerConnection } from '../cluster/peer-connection.js';
import {
  inSyncChangeOwed,
  noLongerPrimary,
  notEnoughReplicas,
  outcomeUnknown,
  type ReplicationRefusal,
  replicationBroken,
} from './refusal.js';
import { ReplicaStream, type StreamHost } from './replica-stream.js';
import {
  checkCommitMove,
  checkEpochRises,
  checkedMove,
  checkInSyncHoldsPrimary,
  type StateMoves,
} from './replication-rules.js';

/** After the commit offset moves, replicas with nothing on its way to them hear of it this soon. */
const HEARTBEAT_DELAY_MS = 2;

export interface ReplicaLag {
  member: string;
  /** The replica holds everything below this; -1 until it said. */
  ackedEnd: number;
  lagRecords: number;
  behindMs: number;
  copiedRecords: number;
}

export interface PipelineDeps {
  selfId: string;
  /** The partition's owner record as the cluster's copy has it now. */
  owner(): OwnerEntry | undefined;
  /** A member's address, if it is live. */
  addressOf(member: string): string | undefined;
  connect(address: string): PeerConnection;
  /** Whether this broker's lease certainly has not expired (logged when it changes; see `advance`). */
  leaseCertain(): boolean;
  /** Writes a new in-sync set (a transaction on the owner record); resolves false if it did not hold. */
  writeInSync(owner: OwnerEntry, isr: readonly string[]): Promise<boolean>;
  minInSync: number;
  lagMaxMs: number;
  log(line: string): void;
  /** Counted: a replica left or joined the in-sync set by this primary's transaction. */
  inSyncChanged(): void;
  /** Told when the partition starts or stops being servable here. */
  servingChanged(): void;
  /**
   * A replica knows a later epoch: another broker is primary, though the copy (cut off from etcd,
   * perhaps) does not show it. This pipeline must step down.
   */
  replaced(epoch: number): void;
}

/**
 * covering: serves nothing until the commit offset covers the log as it was found;
 * serving: its commit offset is the reads' high watermark;
 * broken: a replication rule failed (a bug): it refuses every batch, acknowledges nothing;
 * stopped: no longer primary in this epoch.
 */
export type PipelineState = 'covering' | 'serving' | 'broken' | 'stopped';

const PIPELINE_MOVES: StateMoves<PipelineState> = {
  covering: ['serving', 'broken', 'stopped'],
  serving: ['broken', 'stopped'],
  broken: ['stopped'],
  stopped: [],
};

/**
 * One replicated partition as its primary, in one epoch: the writer's groups are streamed to every
 * replica as they are written, and a group is acknowledged (and readable) once every replica of the
 * in-sync set recorded in etcd holds it (the commit offset). A replica that stays behind longer than
 * the lag bound leaves the set (a transaction), and writes go on while at least minInSync remain; a
 * replica that has caught up with the commit offset joins it again.
 *
 * A new primary serves nothing until its commit offset covers its whole log as it found it: a reader
 * never sees the high watermark go back across a failover, nor a record that is later taken back.
 */
export class PrimaryPipeline implements ReplicationGate, StreamHost {
  private readonly streams = new Map<string, ReplicaStream>();
  private commitOffset: number;
  /** Where this primary's log ended when it took over: records below were written by earlier primaries. */
  private readonly takeoverEnd: number;
  private forcedUntil = 0;
  private current: PipelineState = 'covering';
  /** Whether this broker's lease was certain at the last look (only logged: see `advance`). */
  private leaseHeld = true;
  private heartbeatTimer: TimerHandle | undefined;
  /** The next look at the replicas' lag (re-armed after each). */
  private lagTimer: TimerHandle | undefined;
  private inSyncWrite: Promise<void> | null = null;
  /** Set while the in-sync set is smaller than minInSync: what a PRODUCE is told (kept, not built per request). */
  private shortOf: ReplicationRefusal | null = null;
  /** Set while a replica behind past the lag bound could not be taken out of the set (etcd unreachable). */
  private changeOwed: ReplicationRefusal | null = null;
  /** Set once a replication rule failed: every batch is refused from then on. */
  private broken: ReplicationRefusal | null = null;

  constructor(
    readonly partition: Partition,
    readonly topic: string,
    readonly id: number,
    readonly epoch: number,
    private readonly deps: PipelineDeps,
    private readonly clock: Clock = systemClock,
  ) {
    checkEpochRises(partition.name, partition.epochs.latestEpoch, epoch);
    // Records from here on are this epoch's: a replica cut back to this point agrees with us below it.
    partition.epochs.begin(epoch, partition.logEndOffset);
    this.takeoverEnd = partition.logEndOffset;
    this.commitOffset = partition.highWatermark.value;
    partition.setReplicationGate(this);
    this.syncStreams();
    this.armLagCheck();
    this.advance();
  }

  get committed(): number {
    return this.commitOffset;
  }

  get forcedEnd(): number {
    return this.forcedUntil;
  }

  /**
   * Servable: the commit offset covers everything earlier primaries left in this log. An uncertain
   * lease does not stop it (see `advance`): it serves on through an etcd outage.
   */
  get ready(): boolean {
    return this.current === 'serving';
  }

  get state(): PipelineState {
    return this.current;
  }

  private get halted(): boolean {
    return this.current === 'stopped' || this.current === 'broken';
  }

  /** The one place the state changes; a move its states do not allow is a bug. */
  private transition(to: PipelineState): void {
    this.current = checkedMove(`${this.partition.name} primary`, PIPELINE_MOVES, this.current, to);
  }

  /**
   * Why a PRODUCE is refused now, before it is written: too few in sync, or a replica that must
   * leave the set cannot (etcd unreachable); else null.
   */
  get refusal(): ReplicationRefusal | null {
    return this.broken ?? this.shortOf ?? this.changeOwed;
  }

  /** Lag and catch-up of each replica, for /metrics. */
  replicaStates(): ReplicaLag[] {
    const now = this.clock.now();
    const end = this.partition.logEndOffset;
    return [...this.streams.values()].map((s) => ({
      member: s.member,
      ackedEnd: s.ackedEnd,
      lagRecords: end - Math.max(0, s.ackedEnd),
      behindMs: s.behindMs(now),
      copiedRecords: s.copiedRecords,
    }));
  }

  groupWritten(baseOffset: number, stored: Buffer, count: number, forced: boolean): void {
    if (forced) this.forcedUntil = baseOffset + count;
    for (const stream of this.streams.values()) stream.groupWritten(baseOffset, stored, count, forced);
    // With no replica in the set, the group is committed by this broker alone.
    this.advance();
  }

  acked(_stream: ReplicaStream): void {
    this.advance();
    this.maybeGrow();
  }

  connect(address: string): PeerConnection {
    return this.deps.connect(address);
  }

  replacedBy(epoch: number): void {
    if (!this.halted) this.deps.replaced(epoch);
  }

  log(line: string): void {
    this.deps.log(line);
  }

  /** The copy changed: replicas may have come, gone or moved, the in-sync set may have changed. */
  ownerChanged(): void {
    if (this.halted) return;
    this.syncStreams();
    this.advance();
    this.checkLag();
  }

  /** No longer primary in this epoch: what waits for replicas is told so; the gate comes off. */
  stop(why: string): void {
    if (this.current === 'stopped') return;
    const wasServing = this.current === 'serving';
    this.transition('stopped');
    this.halt(why);
    this.partition.setReplicationGate(null);
    if (wasServing) this.deps.servingChanged();
  }

  /**
   * A replication rule failed: logged, and the partition stops here, never carries on. The gate
   * stays on so every new batch is refused; what waits is told its outcome is unknown.
   */
  private breakDown(error: InvariantError): void {
    const wasServing = this.current === 'serving';
    this.transition('broken');
    this.broken = replicationBroken(this.partition.name, error.message);
    this.deps.log(`${this.broken.message}: refusing every batch until the broker restarts`);
    this.halt(error.message);
    if (wasServing) this.deps.servingChanged();
  }

  /** Timers off, streams stopped, what waits for replicas answered. */
  private halt(why: string): void {
    this.clock.clearTimeout(this.lagTimer);
    this.clock.clearTimeout(this.heartbeatTimer);
    for (const stream of this.streams.values()) stream.stop();
    this.partition.failUncommitted(
      noLongerPrimary(this.partition.name, why),
      outcomeUnknown(this.partition.name, `no longer primary: ${why}`),
    );
  }

  /** The stream to one replica (a handover asks it whether it is alive), if it is one. */
  streamTo(member: string): ReplicaStream | undefined {
    return this.streams.get(member);
  }

  /** Whether a replica answered with a later epoch: this primary has been replaced. */
  get replaced(): boolean {
    for (const stream of this.streams.values()) if (stream.staleEpoch) return true;
    return false;
  }

  private syncStreams(): void {
    const owner = this.deps.owner();
    if (owner === undefined) return;
    for (const member of owner.replicas) {
      if (member === this.deps.selfId) continue;
      const address = this.deps.addressOf(member);
      const stream = this.streams.get(member);
      if (stream === undefined)
        this.streams.set(member, new ReplicaStream(member, address, this, this.clock));
      else stream.setAddress(address);
    }
    for (const [member, stream] of this.streams) {
      if (!owner.replicas.includes(member)) {
        stream.stop();
        this.streams.delete(member);
      }
    }
  }

  /**
   * Moves the commit offset to what every in-sync replica holds; nothing moves while fewer than
   * minInSync are in sync: what waits then is answered at once (OUTCOME_UNKNOWN, its records stay
   * and may be committed once the set is whole again) and new batches are refused before they are
   * written.
   *
   * An uncertain lease (etcd unreachable) stops nothing. What a primary acknowledges is held by
   * every replica of the in-sync set, and only etcd can change that set: a promotion picks a member
   * of it, which holds every record acknowledged here, and once promoted it refuses this epoch's
   * groups (STALE_EPOCH), so nothing more can be acknowledged here. Kafka's leaders work the same
   * way while cut off from their controller.
   */
  private advance(): void {
    if (this.halted) return;
    try {
      this.advanceChecked();
    } catch (error) {
      if (!(error instanceof InvariantError)) throw error;
      this.breakDown(error);
    }
  }

  private advanceChecked(): void {
    const owner = this.deps.owner();
    if (owner === undefined || owner.member !== this.deps.selfId || owner.epoch !== this.epoch) return;
    checkInSyncHoldsPrimary(this.partition.name, owner.member, owner.isr);
    this.noteLease();
    const short = owner.isr.length < this.deps.minInSync;
    if (short && this.shortOf === null) {
      this.shortOf = notEnoughReplicas(this.partition.name, owner.isr.length, this.deps.minInSync);
      this.partition.failUncommitted(
        this.shortOf,
        outcomeUnknown(
          this.partition.name,
          `the in-sync set shrank below its minInSync ${this.deps.minInSync}`,
        ),
      );
    } else if (!short) this.shortOf = null;
    if (short) return;
    const end = this.partition.logEndOffset;
    const inSyncAcked = owner.isr
      .filter((member) => member !== this.deps.selfId)
      .map((member) => ({ member, ackedEnd: this.streams.get(member)?.ackedEnd ?? -1 }));
    let commit = end;
    for (const r of inSyncAcked) if (r.ackedEnd < commit) commit = r.ackedEnd;
    if (commit <= this.commitOffset) {
      this.becomeReadyIfCovered();
      return;
    }
    checkCommitMove(this.partition.name, this.commitOffset, commit, end, inSyncAcked);
    this.commitOffset = commit;
    this.partition.commitTo(commit);
    // Records earlier primaries left were never a group of this writer: published here.
    this.partition.publishCommitted(Math.min(commit, this.takeoverEnd));
    this.becomeReadyIfCovered();
    this.scheduleHeartbeat();
  }

  /** Says once when the lease falls in doubt (etcd unreachable) and once when it is certain again. */
  private noteLease(): void {
    const held = this.deps.leaseCertain();
    if (held === this.leaseHeld) return;
    this.leaseHeld = held;
    this.deps.log(
      held
        ? `${this.partition.name}: the lease is certain again`
        : `${this.partition.name}: the lease is in doubt (etcd unreachable, or this broker leaving): serving on; the in-sync set cannot change meanwhile`,
    );
  }

  private becomeReadyIfCovered(): void {
    if (this.current !== 'covering' || this.commitOffset < this.takeoverEnd) return;
    this.transition('serving');
    this.deps.servingChanged();
  }

  private scheduleHeartbeat(): void {
    if (this.heartbeatTimer !== undefined) return;
    this.heartbeatTimer = this.clock.setTimeout(() => {
      this.heartbeatTimer = undefined;
      for (const stream of this.streams.values()) stream.heartbeat();
    }, HEARTBEAT_DELAY_MS);
  }

  /** Every quarter of the lag bound (at least 50 ms), for as long as this pipeline runs. */
  private armLagCheck(): void {
    this.lagTimer = this.clock.setTimeout(
      () => {
        if (this.halted) return;
        this.armLagCheck();
        this.checkLag();
      },
      Math.max(50, this.deps.lagMaxMs / 4),
    );
    unrefTimer(this.lagTimer);
  }

  /**
   * Replicas of the set behind for longer than the lag bound leave it (one transaction at a time);
   * replicas out of it that caught up join it, without waiting for a write to be acknowledged.
   */
  private checkLag(): void {
    if (this.halted) return;
    // An idle replica is asked now and then, so whether it is level and answering stays known.
    for (const stream of this.streams.values()) stream.keepAlive();
    this.advance();
    const owner = this.deps.owner();
    if (owner === undefined || owner.member !== this.deps.selfId || this.inSyncWrite !== null) return;
    const now = this.clock.now();
    const lagging = owner.isr.filter((m) => {
      if (m === this.deps.selfId) return false;
      const stream = this.streams.get(m);
      // A member whose lease is gone answers nothing more: out at once, not after the lag bound.
      if (stream === undefined || this.deps.addressOf(m) === undefined) return true;
      return stream.behindMs(now) > this.deps.lagMaxMs;
    });
    if (lagging.length === 0) {
      this.changeOwed = null;
      this.maybeGrow();
      return;
    }
    this.changeInSync(
      owner,
      owner.isr.filter((m) => !lagging.includes(m)),
      `${lagging.map((m) => this.streams.get(m)?.describe(now) ?? `${m} gone`).join('; ')}: behind for more than ${this.deps.lagMaxMs} ms or gone, out of the in-sync set`,
      lagging,
    );
  }

  /** A replica out of the set that holds everything committed joins it again. */
  private maybeGrow(): void {
    const owner = this.deps.owner();
    if (owner === undefined || owner.member !== this.deps.selfId || this.inSyncWrite !== null) return;
    const joining = owner.replicas.filter((m) => {
      if (owner.isr.includes(m)) return false;
      const stream = this.streams.get(m);
      // Live, answering, holding everything committed, and caught up lately (else it would leave again).
      return (
        stream !== undefined &&
        this.deps.addressOf(m) !== undefined &&
        stream.inContact &&
        stream.ackedEnd >= this.commitOffset &&
        stream.ackedEnd >= this.takeoverEnd &&
        stream.behindMs() <= this.deps.lagMaxMs / 2
      );
    });
    if (joining.length === 0) return;
    this.changeInSync(
      owner,
      [...owner.isr, ...joining],
      `${joining.join(', ')} caught up: back in the in-sync set`,
    );
  }

  /**
   * Writes a new in-sync set. A shrink (`leaving` named) that etcd does not take leaves new batches
   * refused before they are written until it is taken or the laggards catch up: they could not be
   * acknowledged meanwhile. Batches already written wait, and are acknowledged once either happens.
   */
  private changeInSync(
    owner: OwnerEntry,
    isr: readonly string[],
    why: string,
    leaving: readonly string[] = [],
  ): void {
    const owe = () => {
      if (leaving.length > 0 && this.changeOwed === null && !this.halted) {
        this.changeOwed = inSyncChangeOwed(this.partition.name, leaving);
        this.deps.log(`${this.changeOwed.message}: refusing new batches until it is`);
      }
    };
    this.inSyncWrite = this.deps
      .writeInSync(owner, isr)
      .then(
        (held) => {
          if (!held) {
            owe();
            return;
          }
          this.changeOwed = null;
          this.deps.inSyncChanged();
          this.deps.log(`${this.partition.name}: ${why} (in sync: ${isr.join(', ')})`);
        },
        (error: unknown) => {
          owe();
          this.deps.log(`${this.partition.name}: in-sync change not written: ${String(error)}`);
        },
      )
      .finally(() => {
        this.inSyncWrite = null;
      });
  }
}
