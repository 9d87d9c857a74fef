/**
 * What a handler answers with and where it hands the answer. Below both the api handlers and the
 * services that answer for them (the proxy forwards a peer's answer into the same sink).
 */

/** One response frame, as one buffer or as pieces written back to back (a FETCH header and file bytes). */
export type Reply = Buffer | readonly Buffer[] | PooledReply;

/** Pieces that live in a pooled read buffer: `release` once the socket has taken them. */
export interface PooledReply {
  pieces: readonly Buffer[];
  release: () => void;
}

/** Where a handler hands its one answer; it may do so before the handler returns. */
export interface AnswerSink {
  deliver(reply: Reply): void;
  /** The handler failed in a way that is our bug, not the client's: no answer will come. */
  broken(error: unknown): void;
}

/** Hands a pooled reply's buffer back when the reply will never be written (the client left). */
export function discardReply(reply: Reply | null): void {
  if (reply !== null && !Buffer.isBuffer(reply) && 'release' in reply) reply.release();
}
