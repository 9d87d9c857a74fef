/**
 * Failed authentications, per source address: after a few in a row an address waits before its
 * next attempt is even looked at, the wait doubling to a cap, so a password cannot be guessed at
 * the speed of the network while every other client is served as usual. A success clears the
 * address. The table is bounded: the least recently failing address goes first.
 */
import type { Clock } from '@booblik/protocol';

/** Failures allowed in a row before the first wait. */
export const failuresFree = 3;
export const failureWaitFirstMs = 200;
export const failureWaitMaxMs = 30_000;
const addressesMax = 10_000;

interface Failures {
  count: number;
  /** Monotonic ms before which attempts are refused unseen. */
  waitUntil: number;
}

export class FailureLimiter {
  private readonly byAddress = new Map<string, Failures>();

  constructor(private readonly clock: Clock) {}

  /** How long `address` must still wait, in ms; 0: it may try now. */
  waitOf(address: string): number {
    const f = this.byAddress.get(address);
    return f === undefined ? 0 : Math.max(0, Math.ceil(f.waitUntil - this.clock.now()));
  }

  failed(address: string): void {
    const f = this.byAddress.get(address) ?? { count: 0, waitUntil: 0 };
    this.byAddress.delete(address); // re-inserted last: the map's order is recency
    f.count++;
    if (f.count > failuresFree) {
      const wait = Math.min(failureWaitMaxMs, failureWaitFirstMs * 2 ** (f.count - failuresFree - 1));
      f.waitUntil = this.clock.now() + wait;
    }
    this.byAddress.set(address, f);
    if (this.byAddress.size > addressesMax) this.byAddress.delete(this.byAddress.keys().next().value!);
  }

  succeeded(address: string): void {
    this.byAddress.delete(address);
  }
}
