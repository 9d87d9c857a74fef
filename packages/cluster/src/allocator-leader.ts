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
}

/**
 * Runs the allocator when this broker leads: after each change of the copy, plans and writes what
 * is missing, one run at a time. Every transaction compares this broker's member key, so a leader
 * that lost its membership (and perhaps the lead) writes nothing; an `own` also compares that the
 * partition still has no owner, so two leaders in a handover cannot give it two.
 */
export class AllocatorLeader {
  readonly stats: AllocatorStats = { transactions: 0, roundTrips: 0 };
  private readonly runs: SerialRuns;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly onChange = () => this.kick();

  constructor(
    private readonly client: Etcd3,
    private readonly copy: KeyspaceCopy,
    private self: LeaderSelf,
    private readonly log: (line: string) => void,
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
    clearTimeout(this.retryTimer);
    this.copy.off('change', this.onChange);
  }

  private kick(): void {
    if (!this.stopped) void this.runs.request();
  }

  private async run(): Promise<void> {
    if (!this.isLeader) return;
    const copy = this.copy;
    const assigned = new Map<string, string[]>();
    for (const a of copy.assignments()) {
      const key = `${a.topic}/${a.partition}`;
      assigned.set(key, [...(assigned.get(key) ?? []), a.member]);
    }
    const owners = new Map<string, string>();
    for (const [key, owner] of copy.owners) owners.set(key, owner.member);
    const ops = planAllocation({ members: copy.members, specs: copy.specs, owners, assigned });
    if (ops.length === 0) return;
    for (let i = 0; i < ops.length; i += OPS_PER_TXN) {
      if (this.stopped || !this.isLeader) return;
      try {
        const done = await this.write(ops.slice(i, i + OPS_PER_TXN));
        // A failed compare: the copy is behind or another leader acted; its next change runs us again.
        if (!done) return;
      } catch (error) {
        this.log(`allocator: ${clusterError(error, 'writing assignments').message}`);
        this.retryTimer = setTimeout(() => this.kick(), RETRY_MS);
        this.retryTimer.unref();
        return;
      }
    }
    const owned = ops.filter((o) => o.op === 'own').length;
    if (owned > 0) this.log(`allocator: assigned ${owned} new partition(s)`);
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
      const assignment = ks.assignmentKey(op.topic, op.partition, op.member);
      if (op.op === 'unassign') {
        // After the owner's assignment, in a later position of the same transaction: added before removed.
        last.push(c.delete().key(assignment));
        continue;
      }
      if (op.op === 'own') {
        const owner = ks.ownerKey(op.topic, op.partition);
        txn = txn.and(owner, 'Create', '==', 0);
        puts.push(c.put(owner).value(encodeOwner({ member: op.member })));
      }
      puts.push(
        c
          .put(assignment)
          .value(encodeAssignment({ slot: 0 }))
          .lease(op.leaseId),
      );
    }
    this.stats.roundTrips++;
    const result = await txn.then(...puts, ...last).commit();
    if (result.succeeded) this.stats.transactions++;
    return result.succeeded;
  }
}
