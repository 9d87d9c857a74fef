import { type Capabilities, ErrorCode, ReplicaFlag, type Route } from '@booblik/protocol';
import type { PartitionResolver, ServedPartition } from '../partitions.js';

/**
 * Where one request is served, decided once: the handler acts on it and asks nobody again.
 * - `primary`: this broker is the partition's primary.
 * - `replica`: this broker's in-sync copy answers a read (up to the commit offset it knows).
 * - `proxied`: forwarded to `route.primary` (`fromReplica`: that is an in-sync replica, not the primary).
 * - `unknown`: answered with `code`; with NOT_PRIMARY, `route` is where the client goes instead.
 */
export type Decision =
  | { kind: 'primary'; partition: ServedPartition }
  | { kind: 'replica'; partition: ServedPartition }
  | { kind: 'proxied'; route: Route; fromReplica: boolean }
  | { kind: 'unknown'; code: number; what: string; route?: Route };

/** A write is never served by a replica. */
export type WriteDecision = Exclude<Decision, { kind: 'replica' }>;

/** What the router asks of replication about the replicated partitions open here. */
export interface ReplicaRoles {
  /** This broker's copy, when it is an in-sync replica whose committed records may be read. */
  replicaReadable(topic: string, partition: number): ServedPartition | undefined;
  /** Why the primary here takes no write now (too few in sync, lease uncertain), or null. */
  writeRefusal(partition: ServedPartition): { code: number; message: string } | null;
}

export interface RequestRouterOptions {
  /** Where each partition is served: the registry on one node, the cluster's routes in a cluster. */
  resolver: PartitionResolver;
  /** In a cluster: the replicated partitions' roles here. */
  replicas: ReplicaRoles | null;
  /** In a cluster: requests for partitions served elsewhere may be forwarded. */
  proxying: boolean;
  /** This broker's member id in a cluster ('' on one node). */
  selfId: string;
  isReadOnly(topic: string): boolean;
}

/** The one place that decides where a PRODUCE or a FETCH is served. */
export class RequestRouter {
  constructor(private readonly o: RequestRouterOptions) {}

  /**
   * A replica-readable version reads from an in-sync replica here; any version does while the
   * partition has no primary (a failover, an etcd outage's end): committed data stays readable. A
   * replica whose copy ends before `fetchOffset` does not answer. Else the primary here, or
   * forwarded (to a live in-sync replica when there is no primary), or refused.
   */
  forFetch(topic: string, partition: number, fetchOffset: number, capabilities: Capabilities): Decision {
    const where = this.o.resolver.resolve(topic, partition);
    if ((capabilities.replicaReadable && where.kind === 'remote') || where.kind === 'none') {
      const replica = this.o.replicas?.replicaReadable(topic, partition);
      if (replica !== undefined && fetchOffset <= replica.logEndOffset)
        return { kind: 'replica', partition: replica };
    }
    if (where.kind === 'remote') return this.elsewhere(topic, partition, where.route, capabilities);
    if (where.kind === 'none' && this.proxies(capabilities)) {
      // An original client, through a broker that holds no readable copy: a live in-sync replica may.
      const replica = this.inSyncReplicaAddress(topic, partition);
      if (replica !== undefined)
        return { kind: 'proxied', route: { primary: replica, replicas: [] }, fromReplica: true };
    }
    if (where.kind === 'local') return { kind: 'primary', partition: where.partition };
    return unservedHere(topic, partition, where);
  }

  /** The primary here, unless read-only or refused by replication; else forwarded or refused. */
  forProduce(topic: string, partition: number, capabilities: Capabilities): WriteDecision {
    const where = this.o.resolver.resolve(topic, partition);
    if (where.kind === 'remote') return this.elsewhere(topic, partition, where.route, capabilities);
    if (where.kind !== 'local') return unservedHere(topic, partition, where);
    if (this.o.isReadOnly(topic))
      return { kind: 'unknown', code: ErrorCode.TOPIC_READ_ONLY, what: `${topic}: read-only` };
    const refused = this.o.replicas?.writeRefusal(where.partition);
    if (refused !== undefined && refused !== null)
      return { kind: 'unknown', code: refused.code, what: refused.message };
    return { kind: 'primary', partition: where.partition };
  }

  private proxies(capabilities: Capabilities): boolean {
    return capabilities.proxied && this.o.proxying;
  }

  /** An original client knows one broker: forward it. One that follows routes is told where to go. */
  private elsewhere(
    topic: string,
    partition: number,
    route: Route,
    capabilities: Capabilities,
  ): WriteDecision {
    if (this.proxies(capabilities)) return { kind: 'proxied', route, fromReplica: false };
    return {
      kind: 'unknown',
      code: ErrorCode.NOT_PRIMARY,
      what: `${topic}-${partition}: served by ${route.primary}`,
      route,
    };
  }

  /** Another broker's address that is a live in-sync replica, as the cluster's record shows the partition. */
  private inSyncReplicaAddress(topic: string, partition: number): string | undefined {
    const route = this.o.resolver.routeV2Of(topic, partition, '', false);
    const both = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
    return route.replicas.find(
      (r) => (r.flags & both) === both && r.address !== '' && r.member !== this.o.selfId,
    )?.address;
  }
}

function unservedHere(
  topic: string,
  partition: number,
  where: { kind: 'none' } | { kind: 'failed'; problem: string } | { kind: 'unknown' },
): WriteDecision {
  if (where.kind === 'none')
    return { kind: 'unknown', code: ErrorCode.NO_PRIMARY, what: `${topic}-${partition}: no primary now` };
  if (where.kind === 'failed') {
    // It is here, but could not be opened.
    return {
      kind: 'unknown',
      code: ErrorCode.STORAGE_ERROR,
      what: `${topic}-${partition}: ${where.problem}`,
    };
  }
  return {
    kind: 'unknown',
    code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    what: `${topic}-${partition}: no such topic or partition`,
  };
}
