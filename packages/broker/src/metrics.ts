import { apiKeyMax } from '@booblik/protocol';

/**
 * Counters the hot path bumps as plain numbers (no library call per request); Prometheus reads them
 * at scrape time, and the periodic summary line reads their deltas.
 */
export class BrokerMetrics {
  /** Requests received, by apiKey: the API table's rows name each (their metric label). */
  readonly requests: number[] = new Array<number>(apiKeyMax + 1).fill(0);
  /** Requests that did not decode (the `invalid` label). */
  invalidRequests = 0;
  recordsIn = 0;
  bytesIn = 0;
  /** FETCH payload bytes sent (records are never parsed on the read path, so bytes, not records). */
  fetchBytesOut = 0;
  /** Refusals by wire code name. */
  readonly refusals = new Map<string, number>();
  /** PRODUCE requests with ack NONE that were refused: never answered, so counted here. */
  silentRefusals = 0;
  connectionsOpen = 0;
  connectionsAccepted = 0;
  /** Connections closed at once because max.connections was reached. */
  connectionsRejected = 0;
  /** Connections closed because a frame length was outside 1..8 MiB. */
  connectionsClosedInvalidLength = 0;
  heldFetches = 0;
  /** FETCH v4 answered here as an in-sync replica (not the primary). */
  replicaReads = 0;
  storageErrors = 0;
  authSucceeded = 0;
  /** AUTHENTICATE refused: a wrong password, an unknown user, a bad token. */
  authFailed = 0;
  /** AUTHENTICATE refused unseen: its address failed too often lately. */
  authRateLimited = 0;
  /** Connections closed because they had not authenticated within the time allowed. */
  connectionsClosedUnauthenticated = 0;

  /** One request of `apiKey`, a key of the API table (decodeRequest returns no other). */
  countRequest(apiKey: number): void {
    this.requests[apiKey]!++;
  }

  refused(codeName: string): void {
    this.refusals.set(codeName, (this.refusals.get(codeName) ?? 0) + 1);
  }

  get refusalsTotal(): number {
    let n = 0;
    for (const v of this.refusals.values()) n += v;
    return n;
  }
}
