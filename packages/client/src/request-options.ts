/** The options of a connection and of its requests (a Client takes them too). */
import type { AckPolicyValue } from '@booblik/protocol';
import type { AuthOptions } from './auth.js';
import type { Clock } from './clock.js';
import type { TlsOptions } from './tls-options.js';

export interface ConnectOptions {
  /** Give up connecting after this long (default 10 s). */
  timeoutMs?: number;
  /** Aborts the attempt to connect. Once connected, close() ends the connection. */
  signal?: AbortSignal;
  /** How long an answer may take beyond any wait the request asked for (default 30 s). */
  requestTimeoutMs?: number;
  /** Time source for deadlines (tests pass a manual clock). */
  clock?: Clock;
  /**
   * Authenticate every connection right after it is made: `{ user, password }` (SCRAM-SHA-256) or
   * `{ token }`, a string or a function returning a fresh token (asked again on CREDENTIALS_EXPIRED).
   */
  auth?: AuthOptions;
  /**
   * TLS (a broker with booblik.tls allowed or required): true trusts Node's default CAs; an object
   * gives the CA, a client certificate and key (PEM contents, not paths), and the server name.
   */
  tls?: boolean | TlsOptions;
}

export interface ProduceOptions {
  /** Default WRITTEN. NONE sends and returns null without waiting for (or ever reading) an answer. */
  ack?: AckPolicyValue;
  /**
   * Land the batch only at this offset (PRODUCE v2): if the partition ends elsewhere the batch is
   * refused with OffsetMismatchError carrying the actual end, and nothing is written.
   */
  expectedOffset?: number;
  /**
   * Send PRODUCE v3 (the broker must have it): a cluster broker that is not the partition's primary
   * refuses with NotPrimaryError carrying the route, instead of proxying. Client sets it.
   */
  followRoutes?: boolean;
}

export interface FetchOptions {
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
  /** How long the broker may hold the request for records to arrive; 0 (the default) answers at once. */
  maxWaitMs?: number;
  /** Bytes to wait for; 0 and 1 both mean "anything" (the default 0). */
  minBytes?: number;
  /** Send FETCH v3 (see ProduceOptions.followRoutes). */
  followRoutes?: boolean;
  /** Send FETCH v4: the broker may answer as an in-sync replica, with a high watermark that can trail the primary's. */
  fromReplica?: boolean;
  /**
   * Send FETCH v5 (the broker must have it; see speaksFetchEpochs), which also follows routes and
   * takes reads from replicas as v4: the epoch of the last record read (-1: none known). A position
   * past where that epoch ended is refused with RecordsLostError; the result's records are of one
   * epoch, FetchResult.epoch.
   */
  lastEpoch?: number;
}

export interface RequestOptions {
  /** Stop waiting for the answer. The answer is still read when it comes (to keep the order) and dropped. */
  signal?: AbortSignal;
}
