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

export function noLongerPrimary(name: string, why: string): ReplicationRefusal {
  return new ReplicationRefusal(ErrorCode.NO_PRIMARY, `${name}: not acknowledged (${why})`);
}
