/**
 * The allocator's plan: what the leader writes so that every partition of every spec has an owner
 * and, while its owner is a live member, an assignment under the owner's lease. A pure function of
 * the keyspace copy, so it is tested without etcd.
 *
 * Rules that keep later replication safe start here: a partition is given an owner once and is
 * never moved by the allocator (without replication no other broker has its records; an operator
 * moves it explicitly); a new member receives new partitions only; a dead owner's partitions stay
 * its own, without a primary, until it returns.
 */

export interface AllocatorMember {
  id: string;
  zone: string;
  createRevision: number;
  leaseId: string;
}

export interface AllocatorInput {
  members: ReadonlyMap<string, AllocatorMember>;
  /** Topic name -> partition count. */
  specs: ReadonlyMap<string, { partitions: number }>;
  /** `<topic>/<partition>` -> owning member id. */
  owners: ReadonlyMap<string, string>;
  /** `<topic>/<partition>` -> the members holding an assignment of it. */
  assigned: ReadonlyMap<string, readonly string[]>;
}

export type AllocatorOp =
  /** A partition without an owner: `member` owns it from now on, and is assigned it. */
  | { op: 'own'; topic: string; partition: number; member: string; leaseId: string }
  /** The owner is live but not assigned (it came back with a new lease). */
  | { op: 'assign'; topic: string; partition: number; member: string; leaseId: string }
  /** An assignment that is not the owner's (after a move): removed after the owner's is written. */
  | { op: 'unassign'; topic: string; partition: number; member: string }
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
  const owned = new Map<string, number>();
  for (const id of input.members.keys()) owned.set(id, 0);
  const topicsWithOwners = new Set<string>();
  for (const [key, member] of input.owners) {
    topicsWithOwners.add(topicOf(key));
    if (owned.has(member)) owned.set(member, owned.get(member)! + 1);
  }
  for (const key of input.assigned.keys()) topicsWithOwners.add(topicOf(key));
  for (const topic of [...topicsWithOwners].sort()) {
    if (!input.specs.has(topic)) ops.push({ op: 'dropTopic', topic });
  }

  const live = [...input.members.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const [topic, spec] of [...input.specs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // How many of this topic's partitions each zone holds: a new one goes to the emptiest zone.
    const inZone = new Map<string, number>();
    for (let p = 0; p < spec.partitions; p++) {
      const owner = input.owners.get(`${topic}/${p}`);
      const zone = owner === undefined ? undefined : input.members.get(owner)?.zone;
      if (zone !== undefined) inZone.set(zone, (inZone.get(zone) ?? 0) + 1);
    }
    for (let p = 0; p < spec.partitions; p++) {
      const key = `${topic}/${p}`;
      const holders = input.assigned.get(key) ?? [];
      let owner = input.owners.get(key);
      if (owner === undefined) {
        const chosen = choose(live, owned, inZone);
        if (chosen === undefined) continue; // no member: assigned once one joins
        ops.push({ op: 'own', topic, partition: p, member: chosen.id, leaseId: chosen.leaseId });
        owned.set(chosen.id, owned.get(chosen.id)! + 1);
        inZone.set(chosen.zone, (inZone.get(chosen.zone) ?? 0) + 1);
        owner = chosen.id;
      } else {
        const member = input.members.get(owner);
        if (member !== undefined && !holders.includes(owner)) {
          ops.push({ op: 'assign', topic, partition: p, member: owner, leaseId: member.leaseId });
        }
      }
      for (const holder of holders) {
        if (holder !== owner) ops.push({ op: 'unassign', topic, partition: p, member: holder });
      }
    }
  }
  return ops;
}

/** The live member in the zone holding fewest of the topic's partitions, then owning fewest overall. */
function choose(
  live: readonly AllocatorMember[],
  owned: ReadonlyMap<string, number>,
  inZone: ReadonlyMap<string, number>,
): AllocatorMember | undefined {
  let best: AllocatorMember | undefined;
  for (const m of live) {
    if (best === undefined) {
      best = m;
      continue;
    }
    const zoneDiff = (inZone.get(m.zone) ?? 0) - (inZone.get(best.zone) ?? 0);
    if (zoneDiff < 0 || (zoneDiff === 0 && owned.get(m.id)! < owned.get(best.id)!)) best = m;
  }
  return best;
}

function topicOf(partitionKey: string): string {
  return partitionKey.slice(0, partitionKey.lastIndexOf('/'));
}
