import type { FragmentView, Partition } from '@booblik/log';
import {
  ALL_PARTITIONS,
  ErrorCode,
  encodeListFragmentsResponse,
  FragmentLocation,
  type ListedFragment,
  type ListFragmentsRequest,
  type PartitionFragments,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ApiContext } from './context.js';
import { refuse } from './refusal.js';

const LOCATIONS = {
  local: FragmentLocation.LOCAL,
  store: FragmentLocation.STORE,
  both: FragmentLocation.BOTH,
};

/**
 * LIST_FRAGMENTS v1: the segments of one partition (or of every partition) served here, oldest
 * first, and where each is: on this disk, in the topic's store, or both.
 */
export function handleListFragments(
  req: ListFragmentsRequest,
  correlationId: number,
  ctx: ApiContext,
): Reply {
  const count = ctx.registry.partitionsOf(req.topic)?.length;
  if (count === undefined || (req.partition !== ALL_PARTITIONS && req.partition >= count)) {
    return refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
  const ids = req.partition === ALL_PARTITIONS ? [...Array(count).keys()] : [req.partition];
  const answer: PartitionFragments[] = [];
  for (const id of ids) {
    const partition = ctx.registry.localPartition(req.topic, id);
    if (partition !== undefined) answer.push(describe(partition));
  }
  return encodeListFragmentsResponse(correlationId, answer);
}

function describe(partition: Partition): PartitionFragments {
  return {
    partition: partition.id,
    logStartOffset: partition.logStartOffset,
    highWatermark: partition.highWatermark.value,
    fragments: partition.fragmentViews().map(toListed),
  };
}

function toListed(v: FragmentView): ListedFragment {
  return {
    baseOffset: v.baseOffset,
    endOffset: v.endOffset,
    sizeBytes: v.sizeBytes,
    location: LOCATIONS[v.location],
    persistedMs: v.persistedMs,
  };
}
