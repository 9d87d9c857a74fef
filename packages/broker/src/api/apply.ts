import {
  type ApplyRequest,
  ErrorCode,
  encodeApplyResponse,
  encodeInvalidArgumentResponse,
  encodeRevisionMismatchResponse,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ApiContext } from './context.js';
import { refuse } from './refusal.js';

/**
 * APPLY v1: every change or none, one APPLY at a time (topics/topic-service.ts). Answered once the
 * new specs are durable and their partitions servable, so the caller can use them at once.
 */
export async function handleApply(req: ApplyRequest, correlationId: number, ctx: ApiContext): Promise<Reply> {
  const outcome = await ctx.topics.apply(req);
  switch (outcome.code) {
    case ErrorCode.NONE:
      return encodeApplyResponse(correlationId, outcome.revision);
    case ErrorCode.INVALID_ARGUMENT:
      ctx.metrics.refused('INVALID_ARGUMENT');
      return encodeInvalidArgumentResponse(correlationId, outcome);
    case ErrorCode.REVISION_MISMATCH:
      ctx.metrics.refused('REVISION_MISMATCH');
      return encodeRevisionMismatchResponse(correlationId, { ...outcome, changeIndex: outcome.index });
    case ErrorCode.STORAGE_ERROR:
    case ErrorCode.CLUSTER_UNAVAILABLE:
    // Sent to etcd, no answer: it may have been applied (the broker's copy shows it if so).
    case ErrorCode.OUTCOME_UNKNOWN:
      return refuse(ctx, correlationId, outcome.code);
  }
}
