import {
  type Capabilities,
  ErrorCode,
  encodeMetadataResponse,
  encodeMetadataResponseLocal,
  encodeMetadataResponseV2,
  encodeMetadataResponseV4,
  encodeMetadataResponseV5,
  LAG_UNKNOWN,
  MetadataFlag,
  MetadataOffsets,
  type MetadataOffsetsValue,
  type MetadataRequest,
  type MetadataRequestV3,
  type PartitionMetadata,
  type PartitionMetadataV2,
  type Route,
  type RouteV2,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import { MIN_REVISION_WAIT_MS } from '../topics/topic-table.js';
import type { ApiContext } from './context.js';
import { refuse } from './refusal.js';

const NO_ROUTE: Route = { primary: '', replicas: [] };
const NO_ROUTE_V2: RouteV2 = { epoch: 0, primary: '', replicas: [] };

/**
 * METADATA v1 to v5: every topic when none is named; otherwise the named ones, duplicates
 * collapsed. A named topic that does not exist fails the whole request, so "missing" never looks
 * like "empty". Sorted by name, partitions by id: the same state always gives the same bytes.
 * v2 adds the spec revision and a route per partition (`routes`); v3 waits for a minimum revision
 * first, and with the LOCAL flag answers only the partitions served here (what one broker asks
 * another); v4 answers RouteV2 (`replicaRoutes`: epoch, every replica with its zone, in-sync flag
 * and lag); v5 also says where each partition's offsets come from (`offsetSources`).
 *
 * In a cluster the offsets of a partition served elsewhere are asked of its primary (one request
 * per peer, never etcd). Without a primary, or when it does not answer, a copy of the partition
 * open here gives the range it holds committed (COPY); with none, the offsets are not known
 * (UNKNOWN: 0 and 0, which only v5 can say) and the route is empty.
 */
export function handleMetadata(
  req: MetadataRequest | MetadataRequestV3,
  capabilities: Capabilities,
  correlationId: number,
  ctx: ApiContext,
  endpoint: string,
): Reply | Promise<Reply> {
  const minRevision = 'minRevision' in req ? req.minRevision : 0;
  if (minRevision > ctx.topics.revision) {
    return ctx.topics.reach(minRevision, MIN_REVISION_WAIT_MS).then(
      () => describe(req, capabilities, correlationId, ctx, endpoint),
      () => refuse(ctx, correlationId, ErrorCode.CLUSTER_UNAVAILABLE),
    );
  }
  return describe(req, capabilities, correlationId, ctx, endpoint);
}

/** A partition's entry while the answer is built: the v2 route, the RouteV2 for v4, and where its offsets come from. */
interface Entry extends PartitionMetadataV2 {
  routeV2: RouteV2;
  offsets: MetadataOffsetsValue;
}

function describe(
  req: MetadataRequest | MetadataRequestV3,
  capabilities: Capabilities,
  correlationId: number,
  ctx: ApiContext,
  endpoint: string,
): Reply | Promise<Reply> {
  const localOnly = 'flags' in req && (req.flags & MetadataFlag.LOCAL) !== 0;
  const replicaRoutes = capabilities.replicaRoutes;
  const names =
    req.topics.length === 0 ? ctx.topics.list().map((s) => s.name) : [...new Set(req.topics)].sort();
  const topics: { name: string; partitions: Entry[] }[] = [];
  /** Peer address -> topic -> the entries to fill from its answer, by partition id. */
  const remote = new Map<string, Map<string, Entry[]>>();
  for (const name of names) {
    const spec = ctx.topics.get(name);
    if (spec === undefined) return refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const partitions: Entry[] = [];
    for (let id = 0; id < spec.partitions; id++) {
      const where = ctx.routing.resolve(name, id);
      // Asked about by name, a partition that could not be opened is answered as the error it is;
      // in a listing of every topic it shows without a primary, so the others are still listed.
      if (where.kind === 'failed' && req.topics.length > 0) {
        return refuse(ctx, correlationId, ErrorCode.STORAGE_ERROR);
      }
      if (localOnly && where.kind !== 'local') continue;
      if (where.kind === 'local') {
        const p = where.partition;
        partitions.push({
          partition: id,
          logStartOffset: p.logStartOffset,
          highWatermark: p.highWatermark.value,
          route: capabilities.routes ? ctx.routing.routeOf(name, id, endpoint) : NO_ROUTE,
          routeV2: replicaRoutes ? ctx.routing.routeV2Of(name, id, endpoint, true) : NO_ROUTE_V2,
          offsets: MetadataOffsets.PRIMARY,
        });
        continue;
      }
      // A remote primary's RouteV2 (with the lags only it knows) comes with its answer below; until
      // then (and if it does not answer) the offsets are what a copy here holds committed, if any.
      const entry: Entry = {
        partition: id,
        logStartOffset: 0,
        highWatermark: 0,
        route: NO_ROUTE,
        routeV2: NO_ROUTE_V2,
        offsets: MetadataOffsets.UNKNOWN,
      };
      fromCopyHere(ctx, name, entry);
      partitions.push(entry);
      if (where.kind === 'remote' && ctx.proxy !== null) {
        entry.route = where.route;
        const address = where.route.primary;
        let byTopic = remote.get(address);
        if (byTopic === undefined) {
          byTopic = new Map();
          remote.set(address, byTopic);
        }
        let entries = byTopic.get(name);
        if (entries === undefined) {
          entries = [];
          byTopic.set(name, entries);
        }
        entries[id] = entry;
      } else if (replicaRoutes)
        entry.routeV2 = withoutPrimary(ctx.routing.routeV2Of(name, id, endpoint, false));
    }
    topics.push({ name, partitions });
  }
  const encode = (): Reply => {
    if (!capabilities.routes) return encodeMetadataResponse(correlationId, topics);
    const revision = ctx.topics.revision;
    if (capabilities.offsetSources) {
      const v5Topics = topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ ...p, route: p.routeV2 })),
      }));
      return encodeMetadataResponseV5(correlationId, { revision, topics: v5Topics });
    }
    if (replicaRoutes) {
      const v4Topics = topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ ...p, route: p.routeV2 })),
      }));
      return encodeMetadataResponseV4(correlationId, { revision, topics: v4Topics });
    }
    return localOnly
      ? encodeMetadataResponseLocal(correlationId, { revision, topics })
      : encodeMetadataResponseV2(correlationId, { revision, topics });
  };
  if (remote.size === 0) return encode();
  return fillFromPeers(ctx, remote, replicaRoutes, endpoint).then(encode);
}

/**
 * The committed range of a copy of the partition open here (a replica, or a primary stepping down
 * or not yet serving): everything in it is committed, so it is a range the partition has.
 */
function fromCopyHere(ctx: ApiContext, topic: string, entry: Entry): void {
  const copy = ctx.registry.localPartition(topic, entry.partition);
  if (copy === undefined) return;
  const highWatermark = copy.highWatermark.value;
  if (highWatermark < copy.logStartOffset) return;
  entry.logStartOffset = copy.logStartOffset;
  entry.highWatermark = highWatermark;
  entry.offsets = MetadataOffsets.COPY;
}

/** A route as shown when its primary does not answer: no primary, no lag known. */
function withoutPrimary(route: RouteV2): RouteV2 {
  return {
    epoch: route.epoch,
    primary: '',
    replicas: route.replicas.map((r) => ({ ...r, lagRecords: LAG_UNKNOWN, lagMillis: LAG_UNKNOWN })),
  };
}

/**
 * Asks each peer for the offsets (and with `replicaRoutes` the RouteV2s with their lags) of the
 * partitions it serves; a peer that fails leaves them without a primary.
 */
async function fillFromPeers(
  ctx: ApiContext,
  remote: ReadonlyMap<string, Map<string, Entry[]>>,
  replicaRoutes: boolean,
  endpoint: string,
): Promise<void> {
  await Promise.all(
    [...remote].map(async ([address, byTopic]) => {
      const answered = new Set<Entry>();
      try {
        const topics = [...byTopic.keys()];
        const answer: {
          topics: { name: string; partitions: (PartitionMetadata & { route?: RouteV2 })[] }[];
        } = replicaRoutes
          ? await ctx.proxy!.localMetadataV4(address, topics)
          : await ctx.proxy!.localMetadata(address, topics);
        for (const t of answer.topics) {
          const entries = byTopic.get(t.name);
          if (entries === undefined) continue;
          for (const p of t.partitions) {
            const entry = entries[p.partition];
            if (entry === undefined) continue;
            entry.logStartOffset = p.logStartOffset;
            entry.highWatermark = p.highWatermark;
            entry.offsets = MetadataOffsets.PRIMARY;
            if (p.route !== undefined) entry.routeV2 = p.route;
            answered.add(entry);
          }
        }
      } catch (error) {
        ctx.noisyLog.warn(`METADATA: offsets from ${address} unavailable: ${String(error)}`);
      }
      // What the peer did not answer for (it no longer serves it, or failed): shown without a primary.
      for (const [name, entries] of byTopic) {
        for (const entry of entries) {
          if (entry === undefined || answered.has(entry)) continue;
          entry.route = NO_ROUTE;
          if (replicaRoutes)
            entry.routeV2 = withoutPrimary(ctx.routing.routeV2Of(name, entry.partition, endpoint, false));
        }
      }
    }),
  );
}
