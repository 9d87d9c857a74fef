import type { KeyspaceCopy } from '@booblik/cluster';
import { LAG_UNKNOWN, ReplicaFlag, type ReplicaState, type Route, type RouteV2 } from '@booblik/protocol';
import type { PartitionRegistry, PartitionResolver, Resolution } from '../partitions.js';

const UNKNOWN: Resolution = { kind: 'unknown' };
const NONE: Resolution = { kind: 'none' };
const NO_ROUTE: Route = { primary: '', replicas: [] };

/** What the routes read of the watched copy (a fake stands in for it in the unit tests). */
export type RoutingCopy = Pick<KeyspaceCopy, 'specs' | 'members' | 'ownerOf' | 'assignmentsOf'> & {
  on(event: 'change', listener: () => void): unknown;
};

/** What the replication side tells the routes about the replicated partitions open here. */
export interface ReplicatedPartitions {
  /** Served by this broker now (it is their ready primary). */
  isServing(topic: string, partition: number): boolean;
  /** Each replica's lag, by member, when this broker is the partition's primary. */
  lagOf(
    topic: string,
    partition: number,
  ): ReadonlyMap<string, { records: number; millis: number }> | undefined;
}

/**
 * Where each partition of the cluster is served, from the watched copy: here when this broker owns
 * it and has it open (even while its assignment is gone with a lapsed lease: nobody else has its
 * records), at the primary's address when a live member is assigned it, else nowhere for now.
 * Resolutions are cached per topic and dropped whenever the copy or the local partitions change,
 * so the hot path is two map lookups.
 */
export class ClusterRouting implements PartitionResolver {
  private readonly cache = new Map<string, Resolution[]>();
  /** Routes of replicated partitions served here (the others share `selfRoute`). */
  private readonly localRoutes = new Map<string, Route>();
  private readonly selfRoute: Route;
  constructor(
    private readonly copy: RoutingCopy,
    private readonly registry: Pick<PartitionRegistry, 'get' | 'failureOf'>,
    private readonly self: { readonly id: string; readonly address: string },
    /** Replicated partitions open here: served only while this broker is their ready primary. */
    private readonly replicated: ReplicatedPartitions,
  ) {
    this.selfRoute = { primary: self.address, replicas: [] };
    copy.on('change', () => this.invalidate());
  }

  invalidate(): void {
    this.cache.clear();
    this.localRoutes.clear();
  }

  resolve(topic: string, partition: number): Resolution {
    let resolutions = this.cache.get(topic);
    if (resolutions === undefined) {
      const spec = this.copy.specs.get(topic);
      if (spec === undefined) return UNKNOWN;
      resolutions = [];
      for (let p = 0; p < spec.partitions; p++) resolutions.push(this.compute(topic, p));
      this.cache.set(topic, resolutions);
    }
    return resolutions[partition] ?? UNKNOWN;
  }

  routeOf(topic: string, partition: number): Route {
    const where = this.resolve(topic, partition);
    if (where.kind === 'remote') return where.route;
    if (where.kind === 'local') return this.localRoutes.get(`${topic}/${partition}`) ?? this.selfRoute;
    return NO_ROUTE;
  }

  /**
   * The route with every replica the owner record lists (the primary first), each with its zone,
   * in-sync and live flags, and its lag when this broker is the primary and `withLag` asks for it.
   */
  routeV2Of(topic: string, partition: number, _self: string, withLag: boolean): RouteV2 {
    const primary = this.routeOf(topic, partition).primary;
    const owner = this.copy.ownerOf(topic, partition);
    if (owner === undefined) return { epoch: 0, primary, replicas: [] };
    const lags =
      withLag && owner.member === this.self.id ? this.replicated.lagOf(topic, partition) : undefined;
    const single = owner.replicas.length === 1;
    const replicas: ReplicaState[] = owner.replicas.map((id) => {
      const member = this.copy.members.get(id);
      let flags = member === undefined ? 0 : ReplicaFlag.LIVE;
      if (single || owner.isr.includes(id)) flags |= ReplicaFlag.IN_SYNC;
      const lag = id === owner.member && lags !== undefined ? { records: 0, millis: 0 } : lags?.get(id);
      return {
        member: id,
        address: member?.address ?? '',
        zone: member?.zone ?? '',
        flags,
        lagRecords: lag?.records ?? LAG_UNKNOWN,
        lagMillis: lag?.millis ?? LAG_UNKNOWN,
      };
    });
    return { epoch: owner.epoch, primary, replicas };
  }

  /** This broker as primary, with the other in-sync replicas that are live. */
  private inSyncRoute(primary: string, isr: readonly string[], primaryAddress: string): Route {
    const replicas: string[] = [];
    for (const id of isr) {
      const address = id === primary ? undefined : this.copy.members.get(id)?.address;
      if (address !== undefined) replicas.push(address);
    }
    return { primary: primaryAddress, replicas };
  }

  /** The member id serving the partition now, if any (for the metrics and tests). */
  primaryOf(topic: string, partition: number): string | undefined {
    for (const a of this.copy.assignmentsOf(topic, partition)) {
      if (a.slot === 0 && this.copy.members.has(a.member)) return a.member;
    }
    return undefined;
  }

  private compute(topic: string, partition: number): Resolution {
    const owner = this.copy.ownerOf(topic, partition);
    const replicated = owner !== undefined && owner.replicas.length > 1;
    if (owner?.member === this.self.id) {
      const local = this.registry.get(topic, partition);
      if (local === undefined) {
        const failed = this.registry.failureOf(topic, partition);
        return failed === undefined ? NONE : { kind: 'failed', problem: failed.problem };
      }
      // A replicated primary serves once it is assigned in its epoch and has committed what it found.
      if (replicated && !this.replicated.isServing(topic, partition)) return NONE;
      if (replicated) {
        this.localRoutes.set(
          `${topic}/${partition}`,
          this.inSyncRoute(owner.member, owner.isr, this.self.address),
        );
      }
      return { kind: 'local', partition: local };
    }
    const primary = this.primaryOf(topic, partition);
    const member = primary === undefined ? undefined : this.copy.members.get(primary);
    if (member === undefined) return NONE;
    return { kind: 'remote', route: this.inSyncRoute(member.id, owner?.isr ?? [], member.address) };
  }
}
