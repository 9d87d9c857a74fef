import {
  ErrorCode,
  encodeMetadataResponse,
  encodeMetadataResponseV2,
  type MetadataRequest,
  type Route,
  type TopicMetadata,
  type TopicMetadataV2,
} from '@booblik/protocol';
import type { ApiContext, Reply } from './context.js';
import { refuse } from './refusal.js';

/**
 * METADATA v1: every topic when none is named; otherwise the named ones, duplicates collapsed. A
 * named topic that does not exist fails the whole request, so "missing" never looks like "empty".
 * Sorted by name, partitions by id: the same state always gives the same bytes.
 */
export function handleMetadata(req: MetadataRequest, correlationId: number, ctx: ApiContext): Reply {
  const names = req.topics.length === 0 ? ctx.registry.topicNames() : [...new Set(req.topics)].sort();
  const topics: TopicMetadata[] = [];
  for (const name of names) {
    const partitions = ctx.registry.partitionsOf(name);
    if (partitions === undefined) return refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    topics.push({
      name,
      partitions: partitions.map((p) => ({
        partition: p.id,
        logStartOffset: p.logStartOffset,
        highWatermark: p.highWatermark.value,
      })),
    });
  }
  return encodeMetadataResponse(correlationId, topics);
}

/**
 * METADATA v2: v1's answer with the spec store's revision and each partition's route (here: this
 * broker, `endpoint`, no replicas).
 */
export function handleMetadataV2(
  req: MetadataRequest,
  correlationId: number,
  ctx: ApiContext,
  endpoint: string,
): Reply {
  const names = req.topics.length === 0 ? ctx.registry.topicNames() : [...new Set(req.topics)].sort();
  const route: Route = { primary: endpoint, replicas: [] };
  const topics: TopicMetadataV2[] = [];
  for (const name of names) {
    const partitions = ctx.registry.partitionsOf(name);
    if (partitions === undefined) return refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    topics.push({
      name,
      partitions: partitions.map((p) => ({
        partition: p.id,
        logStartOffset: p.logStartOffset,
        highWatermark: p.highWatermark.value,
        route,
      })),
    });
  }
  return encodeMetadataResponseV2(correlationId, { revision: ctx.topics.revision, topics });
}
