/**
 * The allocator's plan: what the leader writes so that every partition of every spec has an owner
 * record (its primary, replicas and in-sync set) and, for each replica that is a live member, an
 * assignment under that member's lease. A pure function of the keyspace copy, tested without etcd.
 *
 * Rules that keep replication safe:
 * - the allocator never moves a replica (an operator does); a partition created while brokers were
 *   missing gains replicas up to its replication as live members allow, one at a time, each one
 *   copied by the primary before it joins the in-sync set;
 * - a new member receives new partitions, and replicas of partitions short of their replication;
 * - when a primary's lease is gone, one of the in-sync replicas that is live becomes primary, with
 *   the epoch raised; the in-sync set keeps only live members, so the new primary's wait is for
 *   brokers that can answer;
 * - with no live member of the in-sync set, the partition stays without a primary until one returns.
 */
import type { OwnerValue } from './values.js';

export interface AllocatorMember {
  id: string;
  zone: string;
  createRevision: number;
  leaseId: string;
}

export interface AllocatorOwner extends OwnerValue {
  /** The owner key's mod revision: a promotion compares it. */
  modRevision: number;
}

export interface AllocatorInput {
  members: ReadonlyMap<string, AllocatorMember>;
  /** Topic name -> partition count and replicas wanted (>= 1, already resolved from the default). */
  specs: ReadonlyMap<string, { partitions: number; replication: number }>;
  /** `<topic>/<partition>` -> its owner record. */
  owners: ReadonlyMap<string, AllocatorOwner>;
  /** `<topic>/<partition>` -> member -> the slot of its assignment. */
  assigned: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

export type AllocatorOp =
  /** A partition without an owner record: these replicas hold it from now on, `replicas[0]` primary. */
  | { op: 'own'; topic: string; partition: number; replicas: string[]; leaseIds: string[] }
  /** A live replica without its assignment (it came back with a new lease), or with another slot. */
  | { op: 'assign'; topic: string; partition: number; member: string; slot: number; leaseId: string }
  /** An assignment of a member that is no replica (after a move): removed after the others are written. */
  | { op: 'unassign'; topic: string; partition: number; member: string }
  /** The primary is gone: `value.member`, an in-sync live replica, takes over in `value.epoch`. */
  | {
      op: 'promote';
      topic: string;
      partition: number;
      from: string;
      /** The old primary's member key create revision, 0 when it is gone (compared). */
      fromCreateRevision: number;
      value: OwnerValue;
      modRevision: number;
      leaseId: string;
      memberCreateRevision: number;
    }
  /**
   * A partition with fewer replicas than its replication, and a live primary: `member` joins its
   * replicas (in `value`, compared with `modRevision`; not its in-sync set: the primary copies the
   * log to it first), with its assignment in `slot`.
   */
  | {
      op: 'grow';
      topic: string;
      partition: number;
      member: string;
      slot: number;
      leaseId: string;
      value: OwnerValue;
      modRevision: number;
    }
  /** Owners and assignments of a topic whose spec is gone. */
  | { op: 'dropTopic'; topic: string };

/** The member that leads the allocator: the oldest (lowest create revision), as in Gazette. */
export function allocatorLeader(members: ReadonlyMap<string, AllocatorMember>): string | undefined {
  let leader: AllocatorMember | undefined;
  for (const m of members.values()) {
    if (
      leader === undefined ||
      m.createRevision < leader.createRevision ||
      (m.createRevision === leader.createRevision && m.id < leader.id)
    ) {
      leader = m;
    }
  }
  return leader?.id;
}

export function planAllocation(input: AllocatorInput): AllocatorOp[] {
  const ops: AllocatorOp[] = [];
  /** Planned last: the leader writes them after the rest (see AllocatorLeader). */
  const grows: AllocatorOp[] = [];
  /** Partitions each member is primary of, and copies each holds. */
  const primaries = new Map<string, number>();
  const copies = new Map<string, number>();
  for (const id of input.members.keys()) {
    primaries.set(id, 0);
    copies.set(id, 0);
  }
  const topicsWithOwners = new Set<string>();
  for (const [key, owner] of input.owners) {
    topicsWithOwners.add(topicOf(key));
    bump(primaries, owner.member);
    for (const r of owner.replicas) bump(copies, r);
  }
  for (const key of input.assigned.keys()) topicsWithOwners.add(topicOf(key));
  for (const topic of [...topicsWithOwners].sort()) {
    if (!input.specs.has(topic)) ops.push({ op: 'dropTopic', topic });
  }

  const live = [...input.members.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const [topic, spec] of [...input.specs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // How many of this topic's primaries each zone holds: a new one goes to the emptiest zone.
    const inZone = new Map<string, number>();
    for (let p = 0; p < spec.partitions; p++) {
      const owner = input.owners.get(`${topic}/${p}`);
      const zone = owner === undefined ? undefined : input.members.get(owner.member)?.zone;
      if (zone !== undefined) bump(inZone, zone);
    }
    for (let p = 0; p < spec.partitions; p++) {
      const key = `${topic}/${p}`;
      const holders = input.assigned.get(key) ?? new Map<string, number>();
      let replicas: readonly string[];
      const owner = input.owners.get(key);
      if (owner === undefined) {
        const chosen = chooseReplicas(
          live,
          Math.min(spec.replication, live.length),
          primaries,
          copies,
          inZone,
        );
        if (chosen.length === 0) continue; // no member: assigned once one joins
        ops.push({
          op: 'own',
          topic,
          partition: p,
          replicas: chosen.map((m) => m.id),
          leaseIds: chosen.map((m) => m.leaseId),
        });
        bump(primaries, chosen[0]!.id);
        for (const m of chosen) bump(copies, m.id);
        bump(inZone, chosen[0]!.zone);
        continue;
      }
      replicas = owner.replicas;
      // A replicated partition's primary that is gone, or back under a new lease (its assignment went
      // with the old one), is replaced in a new epoch: records it may write from now on must never
      // share an epoch with records its old incarnation wrote and a replica may hold.
      if (!input.members.has(owner.member) || (replicas.length > 1 && holders.get(owner.member) !== 0)) {
        const promotion = promote(topic, p, owner, input.members);
        if (promotion !== null) ops.push(promotion);
        // The other replicas' slots follow on the next run, once the copy shows the new owner record.
        continue;
      }
      for (let slot = 0; slot < replicas.length; slot++) {
        const member = input.members.get(replicas[slot]!);
        if (member !== undefined && holders.get(member.id) !== slot) {
          ops.push({ op: 'assign', topic, partition: p, member: member.id, slot, leaseId: member.leaseId });
        }
      }
      for (const holder of holders.keys()) {
        if (!replicas.includes(holder)) ops.push({ op: 'unassign', topic, partition: p, member: holder });
      }
      // Short of its replication (created while brokers were missing): one more, once its primary
      // serves under its current lease (it copies the log to the new replica).
      const wanted = Math.min(spec.replication, live.length);
      if (replicas.length < wanted && holders.get(owner.member) === 0) {
        const added = chooseAddition(live, replicas, copies, input.members);
        if (added !== undefined) {
          grows.push({
            op: 'grow',
            topic,
            partition: p,
            member: added.id,
            slot: replicas.length,
            leaseId: added.leaseId,
            value: {
              member: owner.member,
              replicas: [...replicas, added.id],
              isr: owner.isr,
              epoch: owner.epoch,
            },
            modRevision: owner.modRevision,
          });
          bump(copies, added.id);
        }
      }
    }
  }
  return [...ops, ...grows];
}

/**
 * The live member to add to a partition's replicas: not one of them, in a zone they do not use where
 * there is one, then holding the fewest copies (then the lowest id: `live` is sorted).
 */
function chooseAddition(
  live: readonly AllocatorMember[],
  replicas: readonly string[],
  copies: ReadonlyMap<string, number>,
  members: ReadonlyMap<string, AllocatorMember>,
): AllocatorMember | undefined {
  const zones = new Set(replicas.flatMap((id) => members.get(id)?.zone ?? []));
  let best: AllocatorMember | undefined;
  for (const m of live) {
    if (replicas.includes(m.id)) continue;
    if (best === undefined) {
      best = m;
      continue;
    }
    const newZone = Number(!zones.has(m.zone)) - Number(!zones.has(best.zone));
    if (newZone > 0 || (newZone === 0 && copies.get(m.id)! < copies.get(best.id)!)) best = m;
  }
  return best;
}

/**
 * A live in-sync replica to take over from a primary whose lease is gone, or null. The first in the
 * replica order wins (a deterministic choice; any in-sync replica holds everything acknowledged); the
 * old primary itself, back under a new lease, only when no other in-sync replica is live.
 */
function promote(
  topic: string,
  partition: number,
  owner: AllocatorOwner,
  members: ReadonlyMap<string, AllocatorMember>,
): AllocatorOp | null {
  const candidate =
    owner.replicas.find((id) => id !== owner.member && owner.isr.includes(id) && members.has(id)) ??
    (members.has(owner.member) ? owner.member : undefined);
  if (candidate === undefined) return null;
  const member = members.get(candidate)!;
  const value: OwnerValue = {
    member: candidate,
    replicas: [candidate, ...owner.replicas.filter((id) => id !== candidate)],
    // Only live members stay in sync: the new primary then waits on brokers that can answer.
    isr: [candidate, ...owner.isr.filter((id) => id !== candidate && members.has(id))],
    epoch: owner.epoch + 1,
  };
  return {
    op: 'promote',
    topic,
    partition,
    from: owner.member,
    fromCreateRevision: members.get(owner.member)?.createRevision ?? 0,
    value,
    modRevision: owner.modRevision,
    leaseId: member.leaseId,
    memberCreateRevision: member.createRevision,
  };
}

/**
 * `count` live members for a new partition. The primary: in the zone holding fewest of the topic's
 * primaries, then the member that is primary of fewest partitions. Each further replica: in a zone
 * not used yet where there is one, then holding the fewest copies.
 */
function chooseReplicas(
  live: readonly AllocatorMember[],
  count: number,
  primaries: ReadonlyMap<string, number>,
  copies: ReadonlyMap<string, number>,
  inZone: ReadonlyMap<string, number>,
): AllocatorMember[] {
  if (count <= 0) return [];
  let primary: AllocatorMember | undefined;
  for (const m of live) {
    if (primary === undefined) {
      primary = m;
      continue;
    }
    const zoneDiff = (inZone.get(m.zone) ?? 0) - (inZone.get(primary.zone) ?? 0);
    if (zoneDiff < 0 || (zoneDiff === 0 && primaries.get(m.id)! < primaries.get(primary.id)!)) primary = m;
  }
  const chosen = [primary!];
  while (chosen.length < count) {
    const zones = new Set(chosen.map((m) => m.zone));
    let best: AllocatorMember | undefined;
    for (const m of live) {
      if (chosen.includes(m)) continue;
      if (best === undefined) {
        best = m;
        continue;
      }
      const newZone = Number(!zones.has(m.zone)) - Number(!zones.has(best.zone));
      if (newZone > 0 || (newZone === 0 && copies.get(m.id)! < copies.get(best.id)!)) best = m;
    }
    chosen.push(best!);
  }
  return chosen;
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function topicOf(partitionKey: string): string {
  return partitionKey.slice(0, partitionKey.lastIndexOf('/'));
}
