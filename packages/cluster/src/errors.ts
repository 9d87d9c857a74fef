/** The cluster package's failures: a class each, `name` set, the cause kept. */

/**
 * etcd did not answer in time or could not be reached. Retriable: nothing is known to have changed,
 * but a write may have been applied before the answer was lost, so retry with the same expected
 * revisions (a retry of an applied change then reports a revision mismatch, never a double change).
 */
export class ClusterUnavailableError extends Error {
  override name = 'ClusterUnavailableError';
  readonly retriable = true;
}

/**
 * A write to etcd was sent and no answer came (a deadline passed, the connection dropped): it may
 * or may not have been applied. Not a refusal: whoever asked must be told the outcome is unknown.
 */
export class ClusterOutcomeUnknownError extends Error {
  override name = 'ClusterOutcomeUnknownError';
  readonly retriable = false;
}

/** One change of an APPLY expected a revision the topic no longer has; nothing was applied. */
export class SpecRevisionMismatchError extends Error {
  override name = 'SpecRevisionMismatchError';
  readonly retriable = false;
  constructor(
    /** The change's position in the APPLY. */
    readonly index: number,
    readonly topic: string,
    readonly expectedRevision: number,
    /** 0 when the topic does not exist. */
    readonly actualRevision: number,
  ) {
    super(
      `changes[${index}]: topic ${topic} is at revision ${actualRevision}, expected ${expectedRevision}; nothing applied`,
    );
  }
}

/** A change the keyspace refuses before any round trip (a bad name, a duplicate topic). */
export class SpecChangeInvalidError extends Error {
  override name = 'SpecChangeInvalidError';
  readonly retriable = false;
}

/** A member's lease is gone (expired, revoked, or unreachable past its TTL): it is no longer a member. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/** waitForRevision gave up: the copy had not reached the revision within its time. */
export class RevisionWaitTimeoutError extends Error {
  override name = 'RevisionWaitTimeoutError';
  readonly retriable = true;
  constructor(
    readonly revision: number,
    readonly reached: number,
    readonly timeoutMs: number,
  ) {
    super(`revision ${revision} not reached within ${timeoutMs} ms (the copy is at ${reached})`);
  }
}

/** Another live broker is a member under the same id: two would both think they serve its partitions. */
export class MemberIdTakenError extends Error {
  override name = 'MemberIdTakenError';
}
