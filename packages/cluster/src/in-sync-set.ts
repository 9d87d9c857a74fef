import type { Etcd3 } from 'etcd3';
import { clusterError } from './etcd-client.js';
import type { Keyspace } from './keyspace.js';
import type { OwnerEntry } from './keyspace-copy.js';
import { encodeAssignment, encodeOwner } from './values.js';

export interface InSyncWriter {
  id: string;
  /** The writer's member key create revision: a primary whose lease is gone changes nothing. */
  createRevision: number;
}

/**
 * A primary's change of its partition's in-sync set: one transaction that holds only if the owner
 * record is the one the primary read (nobody promoted another meanwhile) and the primary's own member
 * key is still the one under its lease. Resolves with the new revision, or null when either compare
 * failed (the caller looks at the copy again).
 */
export function writeInSyncSet(
  client: Etcd3,
  keyspace: Keyspace,
  topic: string,
  partition: number,
  self: InSyncWriter,
  owner: OwnerEntry,
  isr: readonly string[],
): Promise<number | null> {
  if (owner.member !== self.id)
    throw new Error(`${topic}-${partition}: only its primary changes its in-sync set`);
  if (!isr.includes(self.id)) throw new Error(`${topic}-${partition}: the primary is always in sync`);
  const key = keyspace.ownerKey(topic, partition);
  const value = encodeOwner({ member: owner.member, replicas: owner.replicas, isr, epoch: owner.epoch });
  return primaryWrite(
    client,
    keyspace,
    self,
    owner,
    key,
    [client.put(key).value(value)],
    `writing the in-sync set of ${topic}-${partition}`,
  );
}

/**
 * A primary about to stop hands its partition to `next`, an in-sync replica known to be alive: the
 * owner record names it primary in the next epoch, and its assignment is written under its lease.
 * The in-sync set keeps only `next` and the other members of `alive` (in-sync replicas that answered
 * just now): the leaving primary is out of it (nobody waits for it while it restarts), and so is a
 * replica that did not answer (the new primary would wait for it until its lease ended). Conditioned
 * like `writeInSyncSet`. Resolves with the new revision, or null when a compare failed.
 */
export function writeHandOff(
  client: Etcd3,
  keyspace: Keyspace,
  topic: string,
  partition: number,
  self: InSyncWriter,
  owner: OwnerEntry,
  next: { id: string; leaseId: string },
  alive: readonly string[],
): Promise<number | null> {
  if (owner.member !== self.id || !owner.isr.includes(next.id) || next.id === self.id) {
    throw new Error(`${topic}-${partition}: ${self.id} cannot hand it to ${next.id}`);
  }
  const key = keyspace.ownerKey(topic, partition);
  const value = encodeOwner({
    member: next.id,
    replicas: [next.id, ...owner.replicas.filter((id) => id !== next.id)],
    isr: [next.id, ...owner.isr.filter((id) => id !== next.id && id !== self.id && alive.includes(id))],
    epoch: owner.epoch + 1,
  });
  const assignment = client
    .put(keyspace.assignmentKey(topic, partition, next.id))
    .value(encodeAssignment({ slot: 0 }))
    .lease(next.leaseId);
  return primaryWrite(
    client,
    keyspace,
    self,
    owner,
    key,
    [client.put(key).value(value), assignment],
    `handing ${topic}-${partition} to ${next.id}`,
  );
}

/** One transaction of a primary: it holds only while the owner record and its member key are as read. */
async function primaryWrite(
  client: Etcd3,
  keyspace: Keyspace,
  self: InSyncWriter,
  owner: OwnerEntry,
  ownerKey: string,
  puts: ReturnType<Etcd3['put']>[],
  what: string,
): Promise<number | null> {
  try {
    const result = await client
      .if(ownerKey, 'Mod', '==', owner.modRevision)
      .and(keyspace.memberKey(self.id), 'Create', '==', self.createRevision)
      .then(...puts)
      .commit();
    return result.succeeded ? Number(result.header.revision) : null;
  } catch (error) {
    throw clusterError(error, what);
  }
}
