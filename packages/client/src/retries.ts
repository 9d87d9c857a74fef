/** Sending a request again across route changes and failures, with paced, jittered pauses. */
import { type Clock, delay } from './clock.js';
import {
  AbortError,
  BrokerError,
  isConnectionLoss,
  isOutcomeUnknown,
  OutcomeUnknownError,
  type RequestSubject,
} from './errors.js';

/** One send of a request: where it went (to drop that connection if it was lost), and where not to ask. */
export interface Attempt {
  at?: string;
  avoid?: string;
}

/** What a retry loop needs of the client it runs for. */
export interface RetryPolicy {
  readonly attemptsMax: number;
  readonly retryDelayMs: number;
  readonly retryDelayMsMax: number;
  readonly clock: Clock;
  isClosed(): boolean;
  /** A connection to `address` was lost: take it out of the pool. */
  drop(address: string): void;
}

/**
 * Runs `step` until it succeeds, an error that no retry can fix comes, or attempts run out. Retried:
 * connection losses (the broker is dropped from the pool and avoided for the next METADATA) and
 * refusals whose code is retriable in the error table (never OUTCOME_UNKNOWN). `failed` is a first
 * attempt already made. Once a send was lost in flight, giving up reports an OutcomeUnknownError.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  what: string,
  step: (attempt: Attempt) => Promise<T>,
  onRetriable: (error: Error) => 'at-once' | 'pause' = () => 'pause',
  signal?: AbortSignal,
  failed?: { error: Error; at: string },
  subject: RequestSubject = {},
): Promise<T> {
  let avoid: string | undefined;
  let pauses = 0;
  /** A send lost after it went out (a PRODUCE's records may be stored): the caller hears "unknown". */
  let lostInFlight: Error | undefined;
  const giveUp = (error: unknown): Error => {
    if (lostInFlight === undefined || isOutcomeUnknown(error)) return error as Error;
    const last = error instanceof BrokerError ? `was answered ${error.codeName}` : `failed: ${String(error)}`;
    return new OutcomeUnknownError(
      what,
      subject,
      `an earlier send was lost before its answer, and the last one ${last}`,
      { cause: error },
    );
  };
  for (let attempt = 1; ; attempt++) {
    if (policy.isClosed()) throw giveUp(new AbortError(`${what}: the client is closed`));
    const current: Attempt = { avoid };
    let error: unknown;
    if (attempt === 1 && failed) {
      current.at = failed.at;
      error = failed.error;
    } else {
      try {
        return await step(current);
      } catch (caught) {
        error = caught;
      }
    }
    const lost = isConnectionLoss(error);
    const retriable = lost || (error instanceof BrokerError && error.retriable);
    if (!retriable || attempt >= policy.attemptsMax || signal?.aborted) throw giveUp(error);
    // Sent again at least once, as documented: a resend after a lost answer may store it twice.
    if (isOutcomeUnknown(error)) lostInFlight ??= error as Error;
    avoid = undefined;
    if (lost && current.at !== undefined) {
      policy.drop(current.at);
      avoid = current.at;
    }
    const how = onRetriable(error as Error);
    if (how === 'pause' || lost) {
      // Jitter in the upper half of the step: clients that lost one broker do not return in step.
      const step = Math.min(policy.retryDelayMsMax, policy.retryDelayMs * 2 ** Math.min(pauses++, 30));
      await delay(policy.clock, Math.round(step / 2 + (Math.random() * step) / 2), signal).catch(() => {
        throw giveUp(error);
      });
    }
  }
}
