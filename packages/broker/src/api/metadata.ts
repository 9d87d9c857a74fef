import {
  ErrorCode,
  encodeMetadataResponse,
  encodeMetadataResponseLocal,
  encodeMetadataResponseV2,
  MetadataFlag,
  type MetadataRequest,
  type MetadataRequestV3,
  type PartitionMetadataV2,
  type Route,
  type TopicMetadataV2,
} from '@booblik/protocol';
import { MIN_REVISION_WAIT_MS } from '../topics/topic-table.js';
import type { ApiContext, Reply } from './context.js';
import { refuse } from './refusal.js';

const NO_ROUTE: Route = { primary: '', replicas: [] };

/**
 * METADATA v1, v2 and v3: every topic when none is named; otherwise the named ones, duplicates
 * collapsed. A named topic that does not exist fails the whole request, so "missing" never looks
 * like "empty". Sorted by name, partitions by id: the same state always gives the same bytes.
 * v2 adds the spec revision and a route per partition; v3 waits for a minimum revision first, and
 * with the LOCAL flag answers only the partitions served here (what one broker asks another).
 *
 * In a cluster the offsets of a partition served elsewhere are asked of its primary (one request
 * per peer, never etcd); a partition without a primary, or whose primary does not answer, shows
 * offsets 0 and an empty route.
 */
export function handleMetadata(
  req: MetadataRequest | MetadataRequestV3,
  apiVersion: number,
  correlationId: number,
  ctx: ApiContext,
  endpoint: string,
): Reply | Promise<Reply> {
  const minRevision = 'minRevision' in req ? req.minRevision : 0;
  if (minRevision > ctx.topics.revision) {
    return ctx.topics.reach(minRevision, MIN_REVISION_WAIT_MS).then(
      () => describe(req, apiVersion, correlationId, ctx, endpoint),
      () => refuse(ctx, correlationId, ErrorCode.CLUSTER_UNAVAILABLE),
    );
  }
  return describe(req, apiVersion, correlationId, ctx, endpoint);
}

function describe(
  req: MetadataRequest | MetadataRequestV3,
  apiVersion: number,
  correlationId: number,
  ctx: ApiContext,
  endpoint: string,
): Reply | Promise<Reply> {
  const localOnly = 'flags' in req && (req.flags & MetadataFlag.LOCAL) !== 0;
  const names =
    req.topics.length === 0 ? ctx.topics.list().map((s) => s.name) : [...new Set(req.topics)].sort();
  const topics: TopicMetadataV2[] = [];
  /** Peer address -> topic -> the entries to fill from its answer, by partition id. */
  const remote = new Map<string, Map<string, PartitionMetadataV2[]>>();
  for (const name of names) {
    const spec = ctx.topics.get(name);
    if (spec === undefined) return refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const partitions: PartitionMetadataV2[] = [];
    for (let id = 0; id < spec.partitions; id++) {
      const where = ctx.routing.resolve(name, id);
      if (localOnly && where.kind !== 'local') continue;
      if (where.kind === 'local') {
        const p = where.partition;
        partitions.push({
          partition: id,
          logStartOffset: p.logStartOffset,
          highWatermark: p.highWatermark.value,
          route: apiVersion === 1 ? NO_ROUTE : ctx.routing.routeOf(name, id, endpoint),
        });
        continue;
      }
      const entry = { partition: id, logStartOffset: 0, highWatermark: 0, route: NO_ROUTE };
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
      }
    }
    topics.push({ name, partitions });
  }
  const encode = (): Reply => {
    if (apiVersion === 1) return encodeMetadataResponse(correlationId, topics);
    const revision = ctx.topics.revision;
    return localOnly
      ? encodeMetadataResponseLocal(correlationId, { revision, topics })
      : encodeMetadataResponseV2(correlationId, { revision, topics });
  };
  if (remote.size === 0) return encode();
  return fillFromPeers(ctx, remote).then(encode);
}

/** Asks each peer for the offsets of the partitions it serves; a peer that fails leaves them unrouted. */
async function fillFromPeers(
  ctx: ApiContext,
  remote: ReadonlyMap<string, Map<string, PartitionMetadataV2[]>>,
): Promise<void> {
  await Promise.all(
    [...remote].map(async ([address, byTopic]) => {
      const answered = new Set<PartitionMetadataV2>();
      try {
        const answer = await ctx.proxy!.localMetadata(address, [...byTopic.keys()]);
        for (const t of answer.topics) {
          const entries = byTopic.get(t.name);
          if (entries === undefined) continue;
          for (const p of t.partitions) {
            const entry = entries[p.partition];
            if (entry === undefined) continue;
            entry.logStartOffset = p.logStartOffset;
            entry.highWatermark = p.highWatermark;
            answered.add(entry);
          }
        }
      } catch (error) {
        ctx.noisyLog.warn(`METADATA: offsets from ${address} unavailable: ${String(error)}`);
      }
      // What the peer did not answer for (it no longer serves it, or failed): shown without a primary.
      for (const entries of byTopic.values()) {
        for (const entry of entries) if (entry !== undefined && !answered.has(entry)) entry.route = NO_ROUTE;
      }
    }),
  );
}
