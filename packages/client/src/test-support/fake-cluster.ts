/**
 * Fake cluster brokers for route-following tests. Every node answers API_VERSIONS (PRODUCE, FETCH
 * and METADATA up to v3), METADATA v2/v3 with the routes the test set, and APPLY with the next
 * revision. A node serves PRODUCE and FETCH v3 only for the partitions whose route names it, and
 * answers NOT_PRIMARY with the route otherwise; v1/v2 are served as if proxied. The nodes share one
 * MemoryLog (what the cluster stores), so the test sees every record wherever it landed.
 * `script` lets a test answer a request itself first (NO_PRIMARY twice, a cut connection).
 * With `replicas(...)` a partition also has a RouteV2: METADATA v4 answers it, and FETCH v4 is
 * served by any node it lists in sync and live, as a replica would.
 */
import {
  ApiKey,
  ErrorCode,
  encodeApiVersionsResponse,
  encodeApplyResponse,
  encodeErrorResponse,
  encodeMetadataResponseV2,
  encodeMetadataResponseV4,
  encodeNotPrimaryResponse,
  inSyncRouteOf,
  ReplicaFlag,
  type Request,
  type RequestOf,
  type Route,
  type RouteV2,
} from '@booblik/protocol';
import { FakeBroker, type ReceivedRequest } from './fake-broker.js';
import { MemoryLog } from './memory-log.js';

/** What a scripted step returns: an answer, `null` for none, or undefined to let the node answer. */
export type ClusterScript = (req: ReceivedRequest, node: FakeClusterNode) => Buffer | null | undefined;

export interface MetadataSeen {
  version: number;
  topics: string[];
  /** 0 for v2. */
  minRevision: number;
}

export class FakeClusterNode {
  /** METADATA requests as received, in order. */
  readonly metadataSeen: MetadataSeen[] = [];
  /** PRODUCE and FETCH requests this node served itself (not refused NOT_PRIMARY). */
  readonly served: Request[] = [];
  script: ClusterScript | undefined;

  private constructor(
    readonly broker: FakeBroker,
    private readonly cluster: FakeCluster,
  ) {}

  static async start(cluster: FakeCluster): Promise<FakeClusterNode> {
    let node: FakeClusterNode | undefined;
    const broker = await FakeBroker.start((req) => node!.answer(req), { apiVersions: 'handled' });
    node = new FakeClusterNode(broker, cluster);
    return node;
  }

  get address(): string {
    return this.broker.address;
  }

  private answer(req: ReceivedRequest): Buffer | null | Promise<Buffer | null> {
    const scripted = this.script?.(req, this);
    if (scripted !== undefined) return scripted;
    const { request } = req;
    const id = request.correlationId;
    switch (request.apiKey) {
      case ApiKey.API_VERSIONS:
        return encodeApiVersionsResponse(id, [
          { apiKey: ApiKey.PRODUCE, minVersion: 1, maxVersion: 3 },
          { apiKey: ApiKey.FETCH, minVersion: 1, maxVersion: this.cluster.v4 ? 4 : 3 },
          { apiKey: ApiKey.METADATA, minVersion: 1, maxVersion: this.cluster.v4 ? 4 : 3 },
          { apiKey: ApiKey.APPLY, minVersion: 1, maxVersion: 1 },
        ]);
      case ApiKey.APPLY:
        return encodeApplyResponse(id, ++this.cluster.revision);
      case ApiKey.METADATA:
        return this.metadata(request, id);
      case ApiKey.PRODUCE:
      case ApiKey.FETCH: {
        const { topic, partition } = request.body;
        const route = this.cluster.routeOf(topic, partition);
        const exists = partition < (this.cluster.partitions.get(topic) ?? 0);
        const { capabilities } = request;
        const replicaRead =
          capabilities.replicaReadable && this.cluster.readableReplica(topic, partition, this.address);
        if (capabilities.followsRoutes && exists && route.primary !== this.address && !replicaRead) {
          return route.primary === ''
            ? encodeErrorResponse(id, ErrorCode.NO_PRIMARY)
            : encodeNotPrimaryResponse(id, route);
        }
        this.served.push(request);
        return this.cluster.log.handle(req);
      }
      default:
        return encodeErrorResponse(id, ErrorCode.UNSUPPORTED_VERSION);
    }
  }

  private metadata(request: RequestOf<typeof ApiKey.METADATA>, id: number): Buffer {
    const { apiVersion: version, body } = request;
    const minRevision = 'minRevision' in body ? body.minRevision : 0;
    this.metadataSeen.push({ version, topics: [...body.topics], minRevision });
    const names = body.topics.length > 0 ? [...new Set(body.topics)] : [...this.cluster.partitions.keys()];
    const topics = [];
    for (const name of names.sort()) {
      const count = this.cluster.partitions.get(name);
      if (count === undefined) return encodeErrorResponse(id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      topics.push({
        name,
        partitions: Array.from({ length: count }, (_, p) => ({
          partition: p,
          logStartOffset: 0,
          highWatermark: this.cluster.log.records(name, p).length,
          route: this.cluster.routeOf(name, p),
          routeV2: this.cluster.routeV2Of(name, p),
        })),
      });
    }
    if (request.capabilities.replicaRoutes) {
      const v4 = topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ ...p, route: p.routeV2 })),
      }));
      return encodeMetadataResponseV4(id, { revision: this.cluster.revision, topics: v4 });
    }
    return encodeMetadataResponseV2(id, { revision: this.cluster.revision, topics });
  }
}

/** The shared state of the fake nodes: partitions, routes, the log, the spec revision. */
export class FakeCluster {
  readonly nodes: FakeClusterNode[] = [];
  revision = 1;
  /** Whether the nodes speak METADATA v4 and FETCH v4. */
  v4 = true;
  private readonly routes = new Map<string, Route>();
  private readonly routesV2 = new Map<string, RouteV2>();
  readonly partitions: Map<string, number>;

  readonly log: MemoryLog;

  private constructor(topics: Record<string, number>) {
    this.partitions = new Map(Object.entries(topics));
    this.log = new MemoryLog(topics);
  }

  /** `nodes` fake brokers over one log holding `topics` (name -> partition count). */
  static async start(topics: Record<string, number>, nodes: number): Promise<FakeCluster> {
    const cluster = new FakeCluster(topics);
    for (let i = 0; i < nodes; i++) cluster.nodes.push(await FakeClusterNode.start(cluster));
    // Until a test says otherwise, the first node is every partition's primary.
    for (const [name, count] of cluster.partitions) {
      for (let p = 0; p < count; p++) cluster.route(name, p, cluster.nodes[0]!.address);
    }
    return cluster;
  }

  /** Names `primary` ('' for none) as the partition's primary on every node. */
  route(topic: string, partition: number, primary: string): void {
    this.routesV2.delete(`${topic}\u0000${partition}`);
    this.routes.set(`${topic}\u0000${partition}`, { primary, replicas: [] });
  }

  /**
   * Gives the partition a RouteV2: `primary` first, then each of `replicas` in its zone, in sync
   * unless `inSync` is false, live unless `live` is false. The v3 route follows from it.
   */
  replicas(
    topic: string,
    partition: number,
    primary: { address: string; zone: string },
    replicas: readonly { address: string; zone: string; inSync?: boolean; live?: boolean }[],
  ): void {
    const route: RouteV2 = {
      epoch: 1,
      primary: primary.address,
      replicas: [{ ...primary, inSync: true, live: true }, ...replicas].map((r, i) => ({
        member: `m${i}`,
        address: r.live === false ? '' : r.address,
        zone: r.zone,
        flags: (r.inSync === false ? 0 : ReplicaFlag.IN_SYNC) | (r.live === false ? 0 : ReplicaFlag.LIVE),
        lagRecords: 0,
        lagMillis: 0,
      })),
    };
    this.routesV2.set(`${topic}\u0000${partition}`, route);
    this.routes.set(`${topic}\u0000${partition}`, inSyncRouteOf(route));
  }

  routeV2Of(topic: string, partition: number): RouteV2 {
    const v2 = this.routesV2.get(`${topic}\u0000${partition}`);
    if (v2 !== undefined) return v2;
    const primary = this.routeOf(topic, partition).primary;
    const flags = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
    return {
      epoch: 0,
      primary,
      replicas: [{ member: 'm0', address: primary, zone: '', flags, lagRecords: 0, lagMillis: 0 }],
    };
  }

  /** Whether `address` is an in-sync live replica of the partition (it may answer FETCH v4). */
  readableReplica(topic: string, partition: number, address: string): boolean {
    const both = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
    return this.routeV2Of(topic, partition).replicas.some(
      (r) => r.address === address && (r.flags & both) === both,
    );
  }

  routeOf(topic: string, partition: number): Route {
    return this.routes.get(`${topic}\u0000${partition}`) ?? { primary: '', replicas: [] };
  }

  async close(): Promise<void> {
    for (const node of this.nodes) await node.broker.close();
  }
}
