import { ErrorCode, encodeReplicateResponse, type ReplicateRequest } from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ApiContext } from './context.js';

/**
 * REPLICATE v1 (broker to broker): a primary's write group or copy for a partition this broker holds
 * a replica of. A single node, or a broker that holds no copy, answers UNKNOWN_TOPIC_OR_PARTITION.
 */
export function handleReplicate(
  req: ReplicateRequest,
  correlationId: number,
  ctx: ApiContext,
): Reply | Promise<Reply> {
  if (ctx.replication === null) {
    ctx.metrics.refused('UNKNOWN_TOPIC_OR_PARTITION');
    return encodeReplicateResponse(correlationId, {
      code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      logEndOffset: 0,
      lastEpoch: 0,
      knownEpoch: 0,
    });
  }
  const answer = ctx.replication.handleReplicate(req);
  if (answer instanceof Promise) return answer.then((a) => encodeReplicateResponse(correlationId, a));
  return encodeReplicateResponse(correlationId, answer);
}
