import { encodeAssignment, encodeOwner, type KeyspaceCopy, type OwnerEntry } from '@booblik/cluster';
import { ErrorCode } from '@booblik/protocol';
import type { Etcd3 } from 'etcd3';

/** How long a move waits for the new replica to catch up and join the in-sync set. */
export const MOVE_CATCH_UP_WAIT_MS = 10 * 60_000;

export type ReplicatedMoveOutcome =
  | { code: typeof ErrorCode.NONE; revision: number }
  | { code: typeof ErrorCode.INVALID_ARGUMENT; index: -1; message: string }
  | { code: typeof ErrorCode.CLUSTER_UNAVAILABLE; message: string };

export interface MoveDeps {
  etcd: Etcd3;
  copy: KeyspaceCopy;
  /** Resolves true once `condition` holds on the copy (checked at each change), false after `ms`. */
  until(condition: () => boolean, ms: number): Promise<boolean>;
  log(line: string): void;
}

/**
 * A move of a replicated partition that copies before it switches, so no record is ever left behind:
 *
 * 1. the broker coming in is added to the replicas: the primary copies the log to it, and adds it to
 *    the in-sync set once it holds everything committed;
 * 2. then, in one transaction compared with the owner record, the broker going out leaves the
 *    replicas and the in-sync set; if it was the primary, the new one takes over in a new epoch.
 *
 * `to` is the broker coming in (it becomes primary) or, with `away`, the one going out (the
 * replacement is the live broker outside the replicas in the zone least used by them).
 */
export async function moveReplicated(
  deps: MoveDeps,
  topic: string,
  partition: number,
  member: string,
  away: boolean,
): Promise<ReplicatedMoveOutcome> {
  const { copy } = deps;
  const owner = copy.ownerOf(topic, partition)!;
  const invalid = (message: string): ReplicatedMoveOutcome => ({
    code: ErrorCode.INVALID_ARGUMENT,
    index: -1,
    message,
  });
  const name = `${topic}-${partition}`;
  let incoming: string;
  let outgoing: string | null;
  if (away) {
    if (!owner.replicas.includes(member)) return { code: ErrorCode.NONE, revision: copy.revision };
    const replacement = replacementFor(copy, owner);
    if (replacement === undefined)
      return invalid(
        `${name}: no live broker outside its replicas (${owner.replicas.join(', ')}) to take ${member}'s place`,
      );
    incoming = replacement;
    outgoing = member;
  } else {
    incoming = member;
    // The primary leaves when a broker from outside comes in; a replica already there only takes the lead.
    outgoing = owner.replicas.includes(member) ? null : owner.member;
  }
  try {
    if (!owner.replicas.includes(incoming)) {
      const added = await writeOwner(deps, topic, partition, owner, {
        ...owner,
        replicas: [...owner.replicas, incoming],
      });
      if (added === null) return invalid(`${name}: its owner record changed meanwhile; look again and retry`);
      deps.log(`cluster: ${name}: ${incoming} added as a replica; copying before the switch`);
    }
    const caughtUp = await deps.until(
      () => copy.ownerOf(topic, partition)?.isr.includes(incoming) === true,
      MOVE_CATCH_UP_WAIT_MS,
    );
    if (!caughtUp) {
      return invalid(
        `${name}: ${incoming} did not catch up within ${MOVE_CATCH_UP_WAIT_MS / 1000} s; it stays a replica and the move can be asked again`,
      );
    }
    const now = copy.ownerOf(topic, partition)!;
    const leads = away ? (outgoing === now.member ? incoming : now.member) : incoming;
    const keep = (id: string) => id !== outgoing;
    const value = {
      member: leads,
      replicas: [leads, ...now.replicas.filter((id) => id !== leads && keep(id))],
      isr: [leads, ...now.isr.filter((id) => id !== leads && keep(id))],
      epoch: leads === now.member ? now.epoch : now.epoch + 1,
    };
    const switched = await writeOwner(deps, topic, partition, now, value);
    if (switched === null)
      return invalid(`${name}: its owner record changed meanwhile; look again and retry`);
    deps.log(
      `cluster: ${name}: ${outgoing === null ? '' : `${outgoing} out, `}${leads} primary in epoch ${value.epoch} (replicas ${value.replicas.join(', ')})`,
    );
    return { code: ErrorCode.NONE, revision: switched };
  } catch (error) {
    return { code: ErrorCode.CLUSTER_UNAVAILABLE, message: String(error) };
  }
}

/**
 * An unclean election: the partition has no live in-sync replica, and `member`, a live replica out of
 * sync, becomes its primary in a new epoch with itself alone in sync. Whatever only the in-sync set
 * held is lost, on purpose; the others are cut back to the new primary's log when they return.
 */
export async function electUnclean(
  deps: MoveDeps,
  topic: string,
  partition: number,
  member: string,
): Promise<ReplicatedMoveOutcome> {
  const { copy } = deps;
  const owner = copy.ownerOf(topic, partition)!;
  const name = `${topic}-${partition}`;
  const invalid = (message: string): ReplicatedMoveOutcome => ({
    code: ErrorCode.INVALID_ARGUMENT,
    index: -1,
    message,
  });
  const liveInSync = owner.isr.filter((id) => copy.members.has(id));
  if (liveInSync.length > 0) {
    return invalid(
      `${name}: ${liveInSync.join(', ')} in sync and live; an unclean election is only for a partition with none`,
    );
  }
  if (!owner.replicas.includes(member) || !copy.members.has(member)) {
    return invalid(`${name}: ${member} is not a live replica (replicas ${owner.replicas.join(', ')})`);
  }
  try {
    const revision = await writeOwner(deps, topic, partition, owner, {
      member,
      replicas: [member, ...owner.replicas.filter((id) => id !== member)],
      isr: [member],
      epoch: owner.epoch + 1,
    });
    if (revision === null)
      return invalid(`${name}: its owner record changed meanwhile; look again and retry`);
    deps.log(
      `cluster: ${name}: ${member} elected primary UNCLEANLY in epoch ${owner.epoch + 1}; records only ${owner.isr.join(', ')} held are lost`,
    );
    return { code: ErrorCode.NONE, revision };
  } catch (error) {
    return { code: ErrorCode.CLUSTER_UNAVAILABLE, message: String(error) };
  }
}

/** The live member outside the replicas whose zone the remaining replicas use least. */
function replacementFor(copy: KeyspaceCopy, owner: OwnerEntry): string | undefined {
  const zones = new Map<string, number>();
  for (const id of owner.replicas) {
    const zone = copy.members.get(id)?.zone;
    if (zone !== undefined) zones.set(zone, (zones.get(zone) ?? 0) + 1);
  }
  let best: { id: string; zone: string } | undefined;
  for (const m of [...copy.members.values()].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (owner.replicas.includes(m.id)) continue;
    if (best === undefined || (zones.get(m.zone) ?? 0) < (zones.get(best.zone) ?? 0)) best = m;
  }
  return best?.id;
}

/**
 * Writes the owner record if it is still `before`; a new primary gets its assignment under its lease
 * in the same transaction. Resolves with the revision, or null when the record changed meanwhile.
 */
async function writeOwner(
  deps: MoveDeps,
  topic: string,
  partition: number,
  before: OwnerEntry,
  value: { member: string; replicas: readonly string[]; isr: readonly string[]; epoch: number },
): Promise<number | null> {
  const { etcd, copy } = deps;
  const ks = copy.keyspace;
  const puts = [etcd.put(ks.ownerKey(topic, partition)).value(encodeOwner(value))];
  if (value.member !== before.member) {
    const lease = copy.members.get(value.member)?.leaseId;
    if (lease === undefined) return null;
    puts.push(
      etcd
        .put(ks.assignmentKey(topic, partition, value.member))
        .value(encodeAssignment({ slot: 0 }))
        .lease(lease),
    );
  }
  const result = await etcd
    .if(ks.ownerKey(topic, partition), 'Mod', '==', before.modRevision)
    .then(...puts)
    .commit();
  if (!result.succeeded) return null;
  const revision = Number(result.header.revision);
  await copy.waitForRevision(revision).catch(() => {});
  return revision;
}
