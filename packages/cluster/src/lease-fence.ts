import { type Clock, invariant } from '@booblik/protocol';

/** How long before its lease could end a primary stops acknowledging (clock rates differ a little). */
const LEASE_FENCE_MARGIN_MS = 500;

export type MemberState = 'alive' | 'lost' | 'left';

const MEMBER_MOVES: Readonly<Record<MemberState, readonly MemberState[]>> = {
  alive: ['lost', 'left'],
  lost: [],
  left: [],
};

/**
 * A member's lease as its holder can know it: its state, and until when it certainly has not expired
 * at etcd. etcd counts the TTL from when it received the last keepalive it confirmed, which is after
 * we sent it, so that send time + TTL is the earliest the lease can end (less a margin for the
 * clocks' rates).
 *
 *   alive --lease expired / revoked / unreachable--> lost
 *   alive --leave()--> left
 */
export class LeaseFence {
  private current: MemberState = 'alive';
  /** The clock's time when the last keepalive etcd confirmed was sent (or the grant was asked for). */
  private confirmedSentAt: number;
  private lastSentAt: number;

  constructor(
    private readonly leaseMs: number,
    private readonly clock: Clock,
    grantAskedAt: number,
  ) {
    this.confirmedSentAt = grantAskedAt;
    this.lastSentAt = grantAskedAt;
  }

  get state(): MemberState {
    return this.current;
  }

  /** The one place the state changes; a move its states do not allow is a bug. */
  transition(to: MemberState): void {
    invariant(
      MEMBER_MOVES[this.current].includes(to),
      () => `member: ${this.current} -> ${to} is not a move of its states`,
    );
    this.current = to;
  }

  keepaliveSent(): void {
    this.lastSentAt = this.clock.now();
  }

  /** etcd confirmed a keepalive: the last one sent (the client sends one at a time). */
  keepaliveConfirmed(): void {
    this.confirmedSentAt = this.lastSentAt;
  }

  /** Whether the lease certainly has not expired at etcd yet. */
  get certain(): boolean {
    return (
      this.current === 'alive' &&
      this.clock.now() <
        this.confirmedSentAt + this.leaseMs - Math.min(LEASE_FENCE_MARGIN_MS, this.leaseMs / 4)
    );
  }
}
