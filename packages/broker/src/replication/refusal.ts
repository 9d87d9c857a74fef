import { ErrorCode } from '@booblik/protocol';

/** A batch a replicated partition did not acknowledge, with the wire code its producer is told. */
export class ReplicationRefusal extends Error {
  override name = 'ReplicationRefusal';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export function notEnoughReplicas(name: string, inSync: number, minInSync: number): ReplicationRefusal {
  return new ReplicationRefusal(
    ErrorCode.NOT_ENOUGH_REPLICAS,
    `${name}: ${inSync} replica(s) in sync, fewer than its minInSync ${minInSync}`,
  );
}

/** Refuses a batch never written: nothing of it was stored, so it may be sent again. */
export function noLongerPrimary(name: string, why: string): ReplicationRefusal {
  return new ReplicationRefusal(ErrorCode.NO_PRIMARY, `${name}: not written (${why})`);
}

/**
 * A batch written here but not acknowledged: its records stay in this log and on whichever replicas
 * took them, so a later primary may still commit them. Not a refusal: the producer is told the
 * outcome is unknown, so nobody resends it believing nothing was stored.
 */
export function outcomeUnknown(name: string, why: string): ReplicationRefusal {
  return new ReplicationRefusal(
    ErrorCode.OUTCOME_UNKNOWN,
    `${name}: written but not acknowledged (${why}); it may still appear`,
  );
}

/**
 * A replica of the in-sync set fell behind past the lag bound and etcd, the only place the set can
 * shrink, did not take the change: a new batch could not be acknowledged until one of the two
 * heals, so it is refused before it is written.
 */
export function inSyncChangeOwed(name: string, lagging: readonly string[]): ReplicationRefusal {
  return new ReplicationRefusal(
    ErrorCode.CLUSTER_UNAVAILABLE,
    `${name}: ${lagging.join(', ')} fell behind and etcd cannot be reached to take it out of the in-sync set; not written`,
  );
}

/** A replication rule was broken here (a bug): the partition takes nothing more until restarted. */
export function replicationBroken(name: string, why: string): ReplicationRefusal {
  return new ReplicationRefusal(ErrorCode.NO_PRIMARY, `${name}: stopped, a replication rule failed (${why})`);
}
