/**
 * Fake cluster brokers for route-following tests. Every node answers API_VERSIONS (PRODUCE, FETCH
 * and METADATA up to v3), METADATA v2/v3 with the routes the test set, and APPLY with the next
 * revision. A node serves PRODUCE and FETCH v3 only for the partitions whose route names it, and
 * answers NOT_PRIMARY with the route otherwise; v1/v2 are served as if proxied. The nodes share one
 * MemoryLog (what the cluster stores), so the test sees every record wherever it landed.
 * `script` lets a test answer a request itself first (NO_PRIMARY twice, a cut connection).
 */
import {
  ApiKey,
  ErrorCode,
  encodeApiVersionsResponse,
  encodeApplyResponse,
  encodeErrorResponse,
  encodeMetadataResponseV2,
  encodeNotPrimaryResponse,
  type MetadataRequestV3,
  type Request,
  type Route,
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
    const broker = await FakeBroker.start((req) => node!.answer(req));
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
          { apiKey: ApiKey.FETCH, minVersion: 1, maxVersion: 3 },
          { apiKey: ApiKey.METADATA, minVersion: 1, maxVersion: 3 },
          { apiKey: ApiKey.APPLY, minVersion: 1, maxVersion: 1 },
        ]);
      case ApiKey.APPLY:
        return encodeApplyResponse(id, ++this.cluster.revision);
      case ApiKey.METADATA:
        return this.metadata(request.apiVersion, request.body as MetadataRequestV3, id);
      case ApiKey.PRODUCE:
      case ApiKey.FETCH: {
        const { topic, partition } = request.body;
        const route = this.cluster.routeOf(topic, partition);
        const exists = partition < (this.cluster.partitions.get(topic) ?? 0);
        if (request.apiVersion === 3 && exists && route.primary !== this.address) {
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

  private metadata(version: number, body: MetadataRequestV3, id: number): Buffer {
    const minRevision = version === 3 ? body.minRevision : 0;
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
        })),
      });
    }
    return encodeMetadataResponseV2(id, { revision: this.cluster.revision, topics });
  }
}

/** The shared state of the fake nodes: partitions, routes, the log, the spec revision. */
export class FakeCluster {
  readonly nodes: FakeClusterNode[] = [];
  revision = 1;
  private readonly routes = new Map<string, Route>();
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
    this.routes.set(`${topic}\u0000${partition}`, { primary, replicas: [] });
  }

  routeOf(topic: string, partition: number): Route {
    return this.routes.get(`${topic}\u0000${partition}`) ?? { primary: '', replicas: [] };
  }

  async close(): Promise<void> {
    for (const node of this.nodes) await node.broker.close();
  }
}
