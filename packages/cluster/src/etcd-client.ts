import { ExponentialBackoff, type IBackoff, noop } from 'cockatiel';
import { Etcd3, GRPCCancelledError, GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { ClusterUnavailableError } from './errors.js';

/** One etcd round trip longer than this is etcd down or partitioned, not slow: fail and say so. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 3000;
/** Watch reconnects start fast (etcd is often back within a second) and back off to this. */
const WATCH_BACKOFF_MAX_MS = 1000;

export interface EtcdClientOptions {
  /** `http://host:port`, one or more: every member of the etcd cluster a broker may reach. */
  endpoints: readonly string[];
  requestTimeoutMs?: number;
}

/**
 * An etcd client for the cluster: a deadline on every unary call, and no retries or circuit breaker
 * inside the client, so a caller sees ClusterUnavailableError at once and decides (a CAS write
 * retried blindly could report a mismatch for its own success).
 */
export function connectEtcd(options: EtcdClientOptions): Etcd3 {
  if (options.endpoints.length === 0) throw new RangeError('endpoints: none, expected at least one');
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return new Etcd3({
    hosts: [...options.endpoints],
    dialTimeout: requestTimeoutMs,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
    faultHandling: {
      host: () => noop,
      global: noop,
      // etcd3 calls next() on it as on a factory, which is what cockatiel 3 makes; its type says otherwise.
      watchBackoff: new ExponentialBackoff({
        initialDelay: 50,
        maxDelay: WATCH_BACKOFF_MAX_MS,
      }) as unknown as IBackoff<unknown>,
    },
  });
}

/** The error to give a caller for a failed etcd call: unavailability becomes ClusterUnavailableError. */
export function clusterError(error: unknown, doing: string): Error {
  if (
    error instanceof GRPCUnavailableError ||
    error instanceof GRPCDeadlineExceededError ||
    error instanceof GRPCCancelledError
  ) {
    return new ClusterUnavailableError(`${doing}: etcd unreachable (${error.message}); retry`, {
      cause: error,
    });
  }
  return error instanceof Error ? error : new Error(`${doing}: ${String(error)}`);
}
