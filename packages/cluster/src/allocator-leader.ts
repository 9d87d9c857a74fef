import { type Clock, systemClock, type TimerHandle, unrefTimer } from '@booblik/protocol';
import type { Etcd3 } from 'etcd3';
import { type AllocatorOp, allocatorLeader, planAllocation } from './allocator.js';
import { clusterError } from './etcd-client.js';
import type { KeyspaceCopy } from './keyspace-copy.js';
import { SerialRuns } from './serial-runs.js';
import { encodeAssignment, encodeOwner } from './values.js';

/** etcd's default --max-txn-ops is 128; an `own` op is two puts and a compare. */
const OPS_PER_TXN = 40;
/** After etcd failed a write, try again this long after (the copy's next change also retries). */
const RETRY_MS = 500;

export interface LeaderSelf {
  id: string;
  /** The member key's create revision: every leader transaction is conditioned on it. */
  createRevision: number;
}

export interface AllocatorStats {
  /** Transactions written as leader. */
  transactions: number;
  /** etcd round trips made by the allocator (including failed ones). */
  roundTrips: number;
  /** Primaries replaced by an in-sync replica after their lease was gone. */
  promotions: number;
}

/**
 * Runs the allocator when this broker leads: after each change of the copy, plans and writes what
 * is missing, one run at a time. Every transaction compares this broker's member key, so a leader
 * that lost its membership (and perhaps the lead) writes nothing; an `own` also compares that the
 * partition still has no owner, so two leaders in a handover cannot give it two.
 */
export class AllocatorLeader {
  readonly stats: AllocatorStats = { transactions: 0, roundTrips: 0, promotions: 0 };
  private readonly runs: SerialRuns;
  private stopped = false;
  private retryTimer: TimerHandle | undefined;
  private readonly onChange = () => this.kick();

  constructor(
    private readonly client: Etcd3,
    private readonly copy: KeyspaceCopy,
    private self: LeaderSelf,
    private readonly log: (line: string) => void,
    /** Replicas of a topic whose spec leaves replication to the cluster (capped at the members). */
    private readonly defaultReplication = 1,
    private readonly clock: Clock = systemClock,
  ) {
    this.runs = new SerialRuns(
      () => this.run(),
      (error) => this.log(`allocator: ${String(error)}`),
    );
    copy.on('change', this.onChange);
    this.kick();
  }

  /** The member that leads now, by the copy. */
  get leader(): string | undefined {
    return allocatorLeader(this.copy.members);
  }

  get isLeader(): boolean {
    return this.leader === this.self.id;
  }

  /** A new membership (after a lost lease): transactions compare the new member key. */
  rejoined(self: LeaderSelf): void {
    this.self = self;
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.runs.stop();
    this.clock.clearTimeout(this.retryTimer);
    this.copy.off('change', this.onChange);
  }

  private kick(): void {
    if (!this.stopped) void this.runs.request();
  }

  private async run(): Promise<void> {
    if (!this.isLeader) return;
    const copy = this.copy;
    const assigned = new Map<string, Map<string, number>>();
    for (const a of copy.assignments()) {
      const key = `${a.topic}/${a.partition}`;
      const slots = assigned.get(key) ?? new Map<string, number>();
      slots.set(a.member, a.slot);
      assigned.set(key, slots);
    }
    const specs = new Map<string, { partitions: number; replication: number }>();
    for (const [name, spec] of copy.specs) {
      specs.set(name, {
        partitions: spec.partitions,
        replication: spec.replication > 0 ? spec.replication : this.defaultReplication,
      });
    }
    const ops = planAllocation({ members: copy.members, specs, owners: copy.owners, assigned });
    if (ops.length === 0) return;
    // Growth in transactions of its own, last: a primary changing its in-sync set meanwhile fails its
    // compare, and must not hold back a new partition's owner or a promotion.
    const batches: AllocatorOp[][] = [];
    for (const group of [ops.filter((o) => o.op !== 'grow'), ops.filter((o) => o.op === 'grow')]) {
      for (let i = 0; i < group.length; i += OPS_PER_TXN) batches.push(group.slice(i, i + OPS_PER_TXN));
    }
    for (const batch of batches) {
      if (this.stopped || !this.isLeader) return;
      try {
        const done = await this.write(batch);
        // A failed compare: the copy is behind or another leader acted; its next change runs us again.
        if (!done) return;
      } catch (error) {
        this.log(`allocator: ${clusterError(error, 'writing assignments').message}`);
        this.retryTimer = this.clock.setTimeout(() => this.kick(), RETRY_MS);
        unrefTimer(this.retryTimer);
        return;
      }
    }
    const owned = ops.filter((o) => o.op === 'own').length;
    if (owned > 0) this.log(`allocator: assigned ${owned} new partition(s)`);
    for (const op of ops) {
      if (op.op === 'grow') {
        this.log(
          `allocator: ${op.topic}-${op.partition}: ${op.member} added as a replica (replicas ${op.value.replicas.join(', ')}); ${op.value.member} copies to it`,
        );
      }
      if (op.op === 'promote') {
        this.stats.promotions++;
        this.log(
          `allocator: ${op.topic}-${op.partition}: ${op.from === op.value.member ? `${op.from} is back under a new lease` : `${op.from} is gone`}; ${op.value.member} is primary in epoch ${op.value.epoch} (in sync: ${op.value.isr.join(', ')})`,
        );
      }
    }
  }

  private assignment(topic: string, partition: number, member: string, slot: number, leaseId: string) {
    return this.client
      .put(this.copy.keyspace.assignmentKey(topic, partition, member))
      .value(encodeAssignment({ slot }))
      .lease(leaseId);
  }

  private async write(ops: readonly AllocatorOp[]): Promise<boolean> {
    const ks = this.copy.keyspace;
    const c = this.client;
    let txn = c.if(ks.memberKey(this.self.id), 'Create', '==', this.self.createRevision);
    const puts = [];
    const last = [];
    for (const op of ops) {
      if (op.op === 'dropTopic') {
        puts.push(c.delete().prefix(ks.topicOwnersPrefix(op.topic)));
        puts.push(c.delete().prefix(ks.topicAssignmentsPrefix(op.topic)));
        continue;
      }
      if (op.op === 'unassign') {
        // After the replicas' assignments, in a later position of the same transaction: added before removed.
        last.push(c.delete().key(ks.assignmentKey(op.topic, op.partition, op.member)));
        continue;
      }
      const owner = ks.ownerKey(op.topic, op.partition);
      if (op.op === 'own') {
        txn = txn.and(owner, 'Create', '==', 0);
        puts.push(
          c
            .put(owner)
            .value(
              encodeOwner({ member: op.replicas[0]!, replicas: op.replicas, isr: op.replicas, epoch: 1 }),
            ),
        );
        op.replicas.forEach((member, slot) => {
          puts.push(this.assignment(op.topic, op.partition, member, slot, op.leaseIds[slot]!));
        });
        continue;
      }
      if (op.op === 'grow') {
        // Only if nobody changed the record meanwhile (the primary's in-sync set, a move, a promotion).
        txn = txn.and(owner, 'Mod', '==', op.modRevision);
        puts.push(c.put(owner).value(encodeOwner(op.value)));
        puts.push(this.assignment(op.topic, op.partition, op.member, op.slot, op.leaseId));
        continue;
      }
      if (op.op === 'promote') {
        // Only if nobody changed the record meanwhile, the old primary's lease is really gone, and the
        // new one still holds the lease it had when the plan was made.
        txn = txn
          .and(owner, 'Mod', '==', op.modRevision)
          .and(ks.memberKey(op.value.member), 'Create', '==', op.memberCreateRevision);
        if (op.from !== op.value.member)
          txn = txn.and(ks.memberKey(op.from), 'Create', '==', op.fromCreateRevision);
        puts.push(c.put(owner).value(encodeOwner(op.value)));
        puts.push(this.assignment(op.topic, op.partition, op.value.member, 0, op.leaseId));
        continue;
      }
      puts.push(this.assignment(op.topic, op.partition, op.member, op.slot, op.leaseId));
    }
    this.stats.roundTrips++;
    const result = await txn.then(...puts, ...last).commit();
    if (result.succeeded) this.stats.transactions++;
    return result.succeeded;
  }
}
