import type { KeyspaceCopy } from '@booblik/cluster';
import type { Route } from '@booblik/protocol';
import type { PartitionRegistry, PartitionResolver, Resolution } from '../partitions.js';

const UNKNOWN: Resolution = { kind: 'unknown' };
const NONE: Resolution = { kind: 'none' };
const NO_ROUTE: Route = { primary: '', replicas: [] };

/**
 * Where each partition of the cluster is served, from the watched copy: here when this broker owns
 * it and has it open (even while its assignment is gone with a lapsed lease: nobody else has its
 * records), at the primary's address when a live member is assigned it, else nowhere for now.
 * Resolutions are cached per topic and dropped whenever the copy or the local partitions change,
 * so the hot path is two map lookups.
 */
export class ClusterRouting implements PartitionResolver {
  private readonly cache = new Map<string, Resolution[]>();
  private readonly selfRoute: Route;

  constructor(
    private readonly copy: KeyspaceCopy,
    private readonly registry: PartitionRegistry,
    private readonly self: { readonly id: string; readonly address: string },
  ) {
    this.selfRoute = { primary: self.address, replicas: [] };
    copy.on('change', () => this.invalidate());
  }

  invalidate(): void {
    this.cache.clear();
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
    if (where.kind === 'local') return this.selfRoute;
    return NO_ROUTE;
  }

  /** The member id serving the partition now, if any (for the metrics and tests). */
  primaryOf(topic: string, partition: number): string | undefined {
    for (const a of this.copy.assignmentsOf(topic, partition)) {
      if (a.slot === 0 && this.copy.members.has(a.member)) return a.member;
    }
    return undefined;
  }

  private compute(topic: string, partition: number): Resolution {
    if (this.copy.ownerOf(topic, partition)?.member === this.self.id) {
      const local = this.registry.get(topic, partition);
      return local === undefined ? NONE : { kind: 'local', partition: local };
    }
    const primary = this.primaryOf(topic, partition);
    const member = primary === undefined ? undefined : this.copy.members.get(primary);
    return member === undefined ? NONE : { kind: 'remote', route: { primary: member.address, replicas: [] } };
  }
}
