/**
 * This broker's own token, which it presents to the other brokers of its cluster (proxying and
 * replication): signed with the cluster's first key, subject `broker:<id>`, carrying the broker
 * claim. Signed again well before it expires, so a connection that authenticates always has a
 * valid one at hand without waiting.
 */
import { type Clock, unrefTimer } from '@booblik/protocol';
import { BROKER_CLAIM, type TokenVerifier } from './token-verifier.js';

/** How long a broker's token lives; it is signed again at half its life. */
export const peerTokenTtlMs = 60 * 60 * 1000;

export interface PeerToken {
  token: string;
  /** Unix ms. */
  expiresAtMs: number;
}

export class PeerIdentity {
  private closed = false;
  private timer: unknown;

  private constructor(
    private readonly tokens: TokenVerifier,
    readonly principal: string,
    private readonly clock: Clock,
    private currentToken: PeerToken,
  ) {
    this.schedule();
  }

  static async create(tokens: TokenVerifier, brokerId: string, clock: Clock): Promise<PeerIdentity> {
    const principal = `broker:${brokerId}`;
    const first = await tokens.sign(principal, peerTokenTtlMs, { [BROKER_CLAIM]: true });
    return new PeerIdentity(tokens, principal, clock, first);
  }

  current(): PeerToken {
    return this.currentToken;
  }

  /** Unix ms now, on the clock tokens expire by. */
  get wallNowMs(): number {
    return this.tokens.now;
  }

  close(): void {
    this.closed = true;
    this.clock.clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimeout(() => {
      this.tokens
        .sign(this.principal, peerTokenTtlMs, { [BROKER_CLAIM]: true })
        .then((next) => {
          this.currentToken = next;
        })
        // Keys are in memory: signing does not fail but for a bug; the token in hand stays valid a while.
        .catch(() => {})
        .finally(() => this.schedule());
    }, peerTokenTtlMs / 2);
    unrefTimer(this.timer);
  }
}
