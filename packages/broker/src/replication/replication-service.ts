import { type KeyspaceCopy, type OwnerEntry, writeHandOff, writeInSyncSet } from '@booblik/cluster';
import type { Logger, Partition } from '@booblik/log';
import {
  type Clock,
  ErrorCode,
  type ReplicateAnswer,
  type ReplicateRequest,
  systemClock,
} from '@booblik/protocol';
import type { Etcd3 } from 'etcd3';
import type { ReplicatedPartitions } from '../cluster/cluster-routing.js';
import { type PeerSecurity, plaintextPeers } from '../cluster/peer-connection.js';
import { PeerPool } from '../cluster/peer-pool.js';
import type { PartitionRegistry, ServedPartition } from '../partitions.js';
import { PrimaryPipeline } from './primary-pipeline.js';
import type { ReplicationRefusal } from './refusal.js';
import { ReplicaSide } from './replica-side.js';
import { checkOneRole } from './replication-rules.js';

export interface ReplicationOptions {
  selfId: string;
  copy: KeyspaceCopy;
  registry: PartitionRegistry;
  etcd: Etcd3;
  /** This broker's membership now: its lease is certain, and its member key's create revision. */
  membership(): { leaseCertain: boolean; createRevision: number } | null;
  lagMaxMs: number;
  /** minInSync of a topic (from its spec), given its replica count. */
  minInSyncOf(topic: string, replicas: number): number;
  logger: Logger;
  /** Peers' advertised addresses -> the addresses to dial instead (booblik.cluster.peer.dial). */
  peerDial?: ReadonlyMap<string, string> | undefined;
  /** TLS and this broker's token for the other brokers, when the cluster is secured. */
  peerSecurity?: PeerSecurity;
  /** Told when a partition starts or stops being servable here (the routes change). */
  servingChanged(): void;
  /** Time and timers of the pipelines and handovers (the system's unless a test drives them). */
  clock?: Clock;
}

/** How long a handover waits for in-sync replicas to answer that they are alive (a round trip on a LAN). */
const HAND_OFF_ASK_MS = 1000;

type Role = { kind: 'primary'; pipeline: PrimaryPipeline } | { kind: 'replica'; side: ReplicaSide };

/**
 * This broker's part in replication: for each replicated partition open here, the primary's pipeline
 * or the replica's side, kept in line with the owner records of the cluster's copy. A REPLICATE from
 * a primary of a later epoch than the one this broker believes in demotes it at once (its copy may be
 * behind, or it is cut off from etcd): the newer primary's word wins.
 */
export class ReplicationService implements ReplicatedPartitions {
  /** By the partition object the registry serves: no key to build per REPLICATE or PRODUCE. */
  private readonly roles = new Map<Partition, Role>();
  /** Its own connections: a held proxied request never delays a write group behind it. */
  private readonly links: PeerPool;
  /** Partitions served here as their only copy: one that gains replicas keeps taking writes meanwhile. */
  private readonly servedAlone = new WeakSet<Partition>();
  private readonly onChange = () => this.reconcile();
  private stopped = false;
  readonly stats = { promotions: 0, demotions: 0, inSyncChanges: 0 };
  private readonly clock: Clock;

  constructor(private readonly o: ReplicationOptions) {
    this.clock = o.clock ?? systemClock;
    this.links = new PeerPool(o.peerDial, o.peerSecurity ?? plaintextPeers);
    o.copy.on('change', this.onChange);
  }

  /** Brings every partition's role in line with the copy (after a change, or a partition opened). */
  reconcile(): void {
    if (this.stopped) return;
    const seen = new Set<Partition>();
    for (const served of this.o.registry.all()) {
      const partition = this.o.registry.localPartition(served.topic, served.id);
      const owner = this.o.copy.ownerOf(served.topic, served.id);
      if (partition === undefined || owner === undefined) continue;
      if (owner.replicas.length <= 1) {
        if (owner.member === this.o.selfId) this.servedAlone.add(partition);
        continue;
      }
      seen.add(partition);
      this.settle(partition, owner);
    }
    for (const [partition, role] of this.roles) {
      if (seen.has(partition)) continue;
      if (role.kind === 'primary') role.pipeline.stop('the partition is no longer replicated here');
      this.roles.delete(partition);
    }
  }

  /** Whether a replicated partition open here is served by it now (it is a ready primary). */
  isServing(topic: string, id: number): boolean {
    const partition = this.o.registry.localPartition(topic, id);
    const role = partition === undefined ? undefined : this.roles.get(partition);
    return role?.kind === 'primary' && role.pipeline.ready;
  }

  /** Each replica's lag, by member, when this broker is the partition's primary (METADATA v4). */
  lagOf(topic: string, id: number): ReadonlyMap<string, { records: number; millis: number }> | undefined {
    const partition = this.o.registry.localPartition(topic, id);
    const role = partition === undefined ? undefined : this.roles.get(partition);
    if (role?.kind !== 'primary') return undefined;
    const lags = new Map<string, { records: number; millis: number }>();
    for (const s of role.pipeline.replicaStates()) {
      // A replica that has not answered yet: its lag is not known.
      if (s.ackedEnd < 0) continue;
      lags.set(s.member, { records: s.lagRecords, millis: Math.round(s.behindMs) });
    }
    return lags;
  }

  /**
   * The partition when this broker may answer a read of it from its own copy: it is a replica in
   * the in-sync set of the cluster's record, and the primary of the record's epoch has sent it a
   * commit offset (not a replica just restarted with nothing readable); and either its lease is not
   * in doubt, or no live primary is known (a failover, or etcd lost every lease at once): cut off
   * from etcd with a primary still named, it may have been dropped from the set without knowing,
   * and the primary has fresher data. What it serves is at most that commit offset, so committed:
   * this only decides whether the reader should go elsewhere for fresher data.
   */
  replicaReadable(topic: string, id: number): Partition | undefined {
    const partition = this.o.registry.localPartition(topic, id);
    const role = partition === undefined ? undefined : this.roles.get(partition);
    if (role?.kind !== 'replica') return undefined;
    const owner = this.o.copy.ownerOf(topic, id);
    // Named primary while a replica here: it stepped down (its assignment went with its lease), and
    // what it published in that epoch is committed.
    if (owner === undefined || !owner.isr.includes(this.o.selfId)) return undefined;
    if (!role.side.hasCommitFrom(owner.epoch)) return undefined;
    if (this.o.membership()?.leaseCertain === true) return partition;
    const primaryLive = this.o.copy
      .assignmentsOf(topic, id)
      .some((a) => a.slot === 0 && this.o.copy.members.has(a.member));
    return primaryLive ? undefined : partition;
  }

  /** Why a PRODUCE for a partition primary here is refused now, before it is written, or null. */
  writeRefusal(partition: ServedPartition): ReplicationRefusal | null {
    const role = this.roles.get(partition as Partition);
    return role?.kind === 'primary' ? role.pipeline.refusal : null;
  }

  get pipelines(): PrimaryPipeline[] {
    return [...this.roles.values()].flatMap((r) => (r.kind === 'primary' ? [r.pipeline] : []));
  }

  handleReplicate(req: ReplicateRequest): ReplicateAnswer | Promise<ReplicateAnswer> {
    const partition = this.o.registry.localPartition(req.topic, req.partition);
    if (partition === undefined) {
      return { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, logEndOffset: 0, lastEpoch: 0, knownEpoch: 0 };
    }
    let role = this.roles.get(partition);
    if (role?.kind === 'primary') {
      if (req.epoch <= role.pipeline.epoch) {
        return {
          code: ErrorCode.STALE_EPOCH,
          logEndOffset: 0,
          lastEpoch: 0,
          knownEpoch: role.pipeline.epoch,
        };
      }
      // A later primary exists, though our copy does not show it yet: step down now.
      this.demote(partition, role.pipeline, `a primary of epoch ${req.epoch} is streaming to us`);
      role = this.roles.get(partition);
    }
    if (role === undefined) {
      const owner = this.o.copy.ownerOf(req.topic, req.partition);
      if (owner !== undefined && !owner.replicas.includes(this.o.selfId)) {
        return { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, logEndOffset: 0, lastEpoch: 0, knownEpoch: 0 };
      }
      role = { kind: 'replica', side: new ReplicaSide(partition, owner?.epoch ?? 0) };
      this.setRole(partition, role);
    }
    if (role.kind !== 'replica') throw new Error('unreachable');
    return role.side.handle(req);
  }

  /**
   * Before this broker stops (SIGTERM): each partition it is primary of goes to an in-sync replica
   * in a new epoch, so writes move on in the time of one etcd transaction and one round trip, not
   * after a lease. Only to a replica that answers now: a broker killed a moment ago keeps its member
   * key until its lease expires, and a partition handed to it would wait for that lease (or, if it
   * was the only other one in sync, for its return). With none answering, the partition is not
   * handed over and the lease does its work. Resolves once the copy shows every handover (or
   * `timeoutMs` passed).
   */
  async handOff(timeoutMs: number): Promise<number> {
    const membership = this.o.membership();
    if (membership === null) return 0;
    const self = { id: this.o.selfId, createRevision: membership.createRevision };
    const askMs = Math.min(HAND_OFF_ASK_MS, timeoutMs);
    const writes = this.pipelines.map(async (pipeline) => {
      const owner = this.o.copy.ownerOf(pipeline.topic, pipeline.id);
      if (owner === undefined || owner.member !== self.id) return null;
      const inSync = owner.isr.filter((id) => id !== self.id && this.o.copy.members.has(id));
      const answers = await Promise.all(
        inSync.map((id) => pipeline.streamTo(id)?.ping(askMs) ?? Promise.resolve(false)),
      );
      const alive = inSync.filter((_, i) => answers[i]);
      const next = alive.length === 0 ? undefined : this.o.copy.members.get(alive[0]!);
      if (next === undefined) {
        if (inSync.length > 0)
          this.o.logger.warn(
            `${pipeline.partition.name}: not handed over: no in-sync replica answered (${inSync.join(', ')}); the lease hands it on`,
          );
        return null;
      }
      const revision = await writeHandOff(
        this.o.etcd,
        this.o.copy.keyspace,
        pipeline.topic,
        pipeline.id,
        self,
        owner,
        next,
        alive,
      );
      if (revision !== null) {
        const silent = inSync.filter((id) => !alive.includes(id));
        this.o.logger.info(
          `${pipeline.partition.name}: handed to ${next.id} (epoch ${owner.epoch + 1}${silent.length > 0 ? `; ${silent.join(', ')} did not answer, out of the in-sync set` : ''})`,
        );
      }
      return revision;
    });
    let handed = 0;
    const deadline = this.clock.now() + timeoutMs;
    for (const result of await Promise.allSettled(writes)) {
      if (result.status === 'rejected') {
        this.o.logger.warn(`handing a partition over: ${String(result.reason)}`);
        continue;
      }
      if (result.value === null) continue;
      handed++;
      const left = deadline - this.clock.now();
      if (left > 0) await this.o.copy.waitForRevision(result.value, left).catch(() => {});
    }
    this.reconcile();
    return handed;
  }

  /** A peer left the cluster (its lease is gone): replication requests waiting on it fail now. */
  peerGone(address: string): void {
    this.links.closeTo(address);
  }

  close(): void {
    this.stopped = true;
    this.o.copy.off('change', this.onChange);
    for (const role of this.roles.values())
      if (role.kind === 'primary') role.pipeline.stop('the broker is stopping');
    this.roles.clear();
    this.links.closeAll();
  }

  private settle(partition: Partition, owner: OwnerEntry): void {
    const role = this.roles.get(partition);
    const self = this.o.selfId;
    const assignedPrimary = this.o.copy
      .assignmentsOf(partition.topic, partition.id)
      .some((a) => a.member === self && a.slot === 0);
    if (owner.member === self && assignedPrimary) {
      if (role?.kind === 'primary' && role.pipeline.epoch === owner.epoch) {
        if (role.pipeline.replaced) this.demote(partition, role.pipeline, 'a replica knows a later epoch');
        else role.pipeline.ownerChanged();
        return;
      }
      if (role?.kind === 'replica' && role.side.knownEpoch > owner.epoch) return; // our copy is behind
      if (role?.kind === 'primary') role.pipeline.stop(`epoch ${owner.epoch} begins`);
      const pipeline = this.startPipeline(partition, owner);
      this.setRole(partition, { kind: 'primary', pipeline });
      // Ready in its constructor, it told the routes before its role was recorded here: what they
      // resolved then (an APPLY waiting for its primary) saw it not serving, and cached that.
      if (pipeline.ready) this.o.servingChanged();
      this.stats.promotions++;
      this.o.logger.info(
        `${partition.name}: primary in epoch ${owner.epoch} from offset ${partition.logEndOffset} (replicas ${owner.replicas.join(', ')}; in sync ${owner.isr.join(', ')})`,
      );
      return;
    }
    if (role?.kind === 'primary') {
      const why =
        owner.member === self
          ? 'its assignment here is gone (this broker is leaving, or its lease lapsed)'
          : `${owner.member} is primary in epoch ${owner.epoch}`;
      this.demote(partition, role.pipeline, why);
      return;
    }
    if (role?.kind === 'replica') role.side.learnEpoch(owner.epoch);
    else this.setRole(partition, { kind: 'replica', side: new ReplicaSide(partition, owner.epoch) });
  }

  /** The one place a role changes: a partition is primary or replica here, never both at once. */
  private setRole(partition: Partition, role: Role): void {
    const before = this.roles.get(partition);
    checkOneRole(partition.name, before?.kind === 'primary' ? before.pipeline.state : null);
    this.roles.set(partition, role);
  }

  private demote(partition: Partition, pipeline: PrimaryPipeline, why: string): void {
    pipeline.stop(why);
    this.stats.demotions++;
    this.o.logger.warn(`${pipeline.partition.name}: no longer primary in epoch ${pipeline.epoch}: ${why}`);
    this.setRole(partition, {
      kind: 'replica',
      side: new ReplicaSide(partition, pipeline.epoch + 1, pipeline.epoch),
    });
    this.o.servingChanged();
  }

  private startPipeline(partition: Partition, owner: OwnerEntry): PrimaryPipeline {
    const o = this.o;
    const { topic, id } = partition;
    const minInSync = o.minInSyncOf(topic, owner.replicas.length);
    // A partition that was its only copy here and gains replicas (the allocator grows it) took writes
    // on that one copy: it goes on doing so while they are copied, and each replica counts towards
    // minInSync once it has been in sync (a restart counts them all).
    const counted = this.servedAlone.has(partition) ? new Set([o.selfId]) : null;
    this.servedAlone.delete(partition);
    return new PrimaryPipeline(
      partition,
      topic,
      id,
      owner.epoch,
      {
        selfId: o.selfId,
        owner: () => o.copy.ownerOf(topic, id),
        addressOf: (member) => o.copy.members.get(member)?.address,
        connect: (address) => this.links.quick(address),
        leaseCertain: () => o.membership()?.leaseCertain ?? false,
        writeInSync: async (current, isr) => {
          const membership = o.membership();
          if (membership === null) return false;
          const revision = await writeInSyncSet(
            o.etcd,
            o.copy.keyspace,
            topic,
            id,
            { id: o.selfId, createRevision: membership.createRevision },
            current,
            isr,
          );
          if (revision === null) return false;
          await o.copy.waitForRevision(revision).catch(() => {});
          return true;
        },
        get minInSync() {
          if (counted === null) return minInSync;
          for (const member of o.copy.ownerOf(topic, id)?.isr ?? []) counted.add(member);
          return Math.min(minInSync, o.minInSyncOf(topic, counted.size));
        },
        lagMaxMs: o.lagMaxMs,
        log: (line) => o.logger.info(line),
        inSyncChanged: () => {
          this.stats.inSyncChanges++;
        },
        servingChanged: () => o.servingChanged(),
        // Out of the stream's answer first: stepping down stops that stream.
        replaced: (epoch) =>
          queueMicrotask(() => {
            const role = this.roles.get(partition);
            if (role?.kind === 'primary' && role.pipeline.epoch < epoch) {
              this.demote(partition, role.pipeline, `a replica knows epoch ${epoch}`);
            }
          }),
      },
      this.clock,
    );
  }
}
