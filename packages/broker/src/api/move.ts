import {
  ErrorCode,
  encodeInvalidArgumentResponse,
  encodeMoveResponse,
  MoveFlag,
  type MoveRequest,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ApiContext } from './context.js';
import { refuse } from './refusal.js';

/** MOVE v1: a partition given to another member of the cluster (`booblik partitions move`). */
export async function handleMove(req: MoveRequest, correlationId: number, ctx: ApiContext): Promise<Reply> {
  if (ctx.cluster === null) {
    ctx.metrics.refused('INVALID_ARGUMENT');
    return encodeInvalidArgumentResponse(correlationId, {
      index: -1,
      message:
        'MOVE: this broker is a single node (booblik.cluster.etcd is empty); partitions move between brokers of a cluster',
    });
  }
  const outcome = await ctx.cluster.move(
    req.topic,
    req.partition,
    req.member,
    (req.flags & MoveFlag.ABANDON_RECORDS) !== 0,
    (req.flags & MoveFlag.AWAY) !== 0,
    (req.flags & MoveFlag.UNCLEAN) !== 0,
  );
  switch (outcome.code) {
    case ErrorCode.NONE:
      return encodeMoveResponse(correlationId, outcome.revision);
    case ErrorCode.INVALID_ARGUMENT:
      ctx.metrics.refused('INVALID_ARGUMENT');
      return encodeInvalidArgumentResponse(correlationId, outcome);
    default:
      return refuse(ctx, correlationId, outcome.code);
  }
}
