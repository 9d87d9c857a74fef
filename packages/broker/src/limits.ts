/**
 * The broker's limits, each in one place with its reason. Limits of the wire itself (frame size,
 * the long-poll cap) live in @booblik/protocol's limits.ts; these are the server's own.
 */
import {
  fetchResponseFixedBytes,
  fetchResponseV5FixedBytes,
  fetchWaitMsMax,
  frameBytesMax,
  responseHeaderBytes,
} from '@booblik/protocol';

export { fetchWaitMsMax, frameBytesMax };

/**
 * The most FETCH payload one answer carries: what fits a response frame (8 MiB) after the response
 * header and the FETCH fields. A larger maxBytes is served as this much, because a client refuses
 * any frame above 8 MiB (found by the reliability suite: maxBytes 2^31-1 got a 12 MiB frame).
 */
export const fetchPayloadBytesMax = frameBytesMax - responseHeaderBytes - fetchResponseFixedBytes;

/** The same for a FETCH v5 answer, whose body carries the epoch fields too. */
export const fetchPayloadBytesMaxV5 = frameBytesMax - responseHeaderBytes - fetchResponseV5FixedBytes;

/**
 * Bytes of responses a connection may have waiting in its socket buffer, together with what its
 * requests in flight may hold (PRODUCE frames, FETCH answers up to their maxBytes), before the broker
 * stops reading its requests: a client that never reads cannot make the broker hold more than this,
 * however fast it sends. Two maximum frames, so one large fetch answer never stalls a healthy reader.
 */
export const connectionPendingWriteBytesMax = 2 * frameBytesMax;

/** How long a graceful shutdown waits for queued writes and answers before closing sockets anyway. */
export const shutdownGraceMs = 10_000;

/**
 * A broker keeps a week of records unless a topic says otherwise: time to notice a stopped consumer
 * and replay. The log library's own default is -1 (keep all): the broker always passes this one.
 */
export const retentionMsDefault = 7 * 24 * 3600 * 1000;

/** Retention looks for segments to remove every 5 minutes: segments roll far less often than that. */
export const retentionCheckMsDefault = 5 * 60 * 1000;

function assert(condition: boolean, message: string): void {
  if (!condition) throw new Error(`broker limits: ${message}`);
}

assert(connectionPendingWriteBytesMax >= frameBytesMax, 'one whole response must fit the write budget');

/**
 * How long a connection to a broker with `booblik.auth=required` may stay open without having
 * authenticated: long enough for a SCRAM exchange over a slow link, short enough that strangers
 * cannot hold the connection table.
 */
export const authenticationTimeoutMs = 10_000;
