/**
 * Reads from in-sync replicas in a preferred zone (the Client's `preferZone`): which replica a fetch
 * goes to, and the high watermark guard that keeps a reader's view from going back when a replica's
 * commit offset trails the primary's.
 */
import { ReplicaFlag, type RouteV2 } from '@booblik/protocol';
import type { FetchResult } from './fetch-result.js';

const READABLE = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;

/**
 * The address a fetch goes to: the primary when it is an in-sync live replica in `zone`, else the
 * first such replica in the route's order; undefined when none is (the fetch goes to the primary).
 */
export function readerInZone(route: RouteV2, zone: string): string | undefined {
  let first: string | undefined;
  for (const r of route.replicas) {
    if (r.zone !== zone || (r.flags & READABLE) !== READABLE || r.address === '') continue;
    if (r.address === route.primary) return r.address;
    first ??= r.address;
  }
  return first;
}

/** Per partition, the highest high watermark any answer showed; answers are raised to it. */
export class HighWatermarkFloor {
  private readonly seen = new Map<string, number>();

  raise(key: string, result: FetchResult): FetchResult {
    const floor = this.seen.get(key) ?? 0;
    if (result.highWatermark > floor) this.seen.set(key, result.highWatermark);
    else result.highWatermark = floor;
    return result;
  }
}
