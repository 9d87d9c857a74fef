import { ExponentialBackoff, type IBackoff, noop } from 'cockatiel';
import { Etcd3, GRPCCancelledError, GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { ClusterOutcomeUnknownError, ClusterUnavailableError } from './errors.js';

/** One etcd round trip longer than this is etcd down or partitioned, not slow: fail and say so. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 3000;
/**
 * gRPC redials a lost etcd with a backoff that grows to 2 minutes by default; capped here so a
 * broker is back within a second of etcd.
 */
const RECONNECT_BACKOFF_MAX_MS = 1000;
/**
 * A ping on an idle connection finds a silently dead link (a partition, not a closed socket). etcd
 * refuses pings more often than every 5 s (`--grpc-keepalive-min-time`), hence 10 s.
 */
const KEEPALIVE_TIME_MS = 10_000;
const KEEPALIVE_TIMEOUT_MS = 5000;
/** Watch reconnects start fast (etcd is often back within a second) and back off to this. */
const WATCH_BACKOFF_MAX_MS = 1000;

export interface EtcdClientOptions {
  /** `http://host:port` (or `https://` with `tls`), one or more: every member of the etcd cluster a broker may reach. */
  endpoints: readonly string[];
  requestTimeoutMs?: number;
  /** TLS to etcd: the CA its certificate must chain to, and this broker's certificate for etcd's client-cert auth. */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** etcd's own authentication (a user with a role on the cluster's prefix). */
  auth?: { username: string; password: string };
}

/**
 * An etcd client for the cluster: a deadline on every unary call, and no retries or circuit breaker
 * inside the client, so a caller sees ClusterUnavailableError at once and decides (a CAS write
 * retried blindly could report a mismatch for its own success).
 */
export function connectEtcd(options: EtcdClientOptions): Etcd3 {
  if (options.endpoints.length === 0) throw new RangeError('endpoints: none, expected at least one');
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const { tls, auth } = options;
  return new Etcd3({
    hosts: [...options.endpoints],
    ...(tls
      ? {
          credentials: {
            rootCertificate: tls.ca,
            ...(tls.cert && tls.key ? { certChain: tls.cert, privateKey: tls.key } : {}),
          },
        }
      : {}),
    ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}),
    dialTimeout: requestTimeoutMs,
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': RECONNECT_BACKOFF_MAX_MS,
      'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
      'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
      'grpc.keepalive_permit_without_calls': 1,
    },
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

/**
 * gRPC fails a call at once, without sending it, while it has no connection to any endpoint (the
 * call does not wait for one): only then is a failed write known not to have reached etcd.
 */
const notSentPattern = /No connection established/;

/**
 * The error to give a caller for a failed etcd write: not sent (no connection) is
 * ClusterUnavailableError, a refusal; sent without an answer (a deadline, a connection lost on the
 * way) is ClusterOutcomeUnknownError, since etcd may have applied it.
 */
export function clusterWriteError(error: unknown, doing: string): Error {
  const mapped = clusterError(error, doing);
  if (!(mapped instanceof ClusterUnavailableError)) return mapped;
  if (error instanceof GRPCUnavailableError && notSentPattern.test(error.message)) return mapped;
  return new ClusterOutcomeUnknownError(
    `${doing}: etcd did not answer (${(error as Error).message}); it may have been applied`,
    { cause: error },
  );
}
