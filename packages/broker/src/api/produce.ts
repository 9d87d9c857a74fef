import { type AppendResult, OffsetMismatchError, StorageError } from '@booblik/log';
import {
  AckPolicy,
  ErrorCode,
  encodeOffsetMismatchResponse,
  encodeProduceResponse,
  type ProduceRequest,
} from '@booblik/protocol';
import type { ApiContext, Reply } from './context.js';
import { codeForAppendError, refuse, refuseSilently } from './refusal.js';

/**
 * PRODUCE v1. Checks in the spec's order (decoding was done by the session): unknown topic or
 * partition, then RECORD_TOO_LARGE (the writer refuses the whole batch before writing any of it).
 * Returns null when nothing may be answered: every outcome of an ack NONE request.
 */
export function handleProduce(
  req: ProduceRequest,
  correlationId: number,
  ctx: ApiContext,
  /** Told when an ack NONE batch (which has no answer to wait for) is done with: written or refused. */
  onUnansweredSettled?: (settled: Promise<unknown>) => void,
): Reply | Promise<Reply> | null {
  const silent = req.ack === AckPolicy.NONE;
  const where = ctx.registry.resolve(req.topic, req.partition);
  if (where.kind !== 'local') {
    // Served elsewhere (the cluster fills that in) or nowhere.
    const code = where.kind === 'remote' ? ErrorCode.NOT_PRIMARY : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    const what = `${req.topic}-${req.partition}: ${where.kind === 'remote' ? 'served by another broker' : 'no such topic or partition'}`;
    return silent ? refuseSilently(ctx, code, what) : refuse(ctx, correlationId, code);
  }
  const partition = where.partition;
  if (ctx.registry.isReadOnly(req.topic)) {
    return silent
      ? refuseSilently(ctx, ErrorCode.TOPIC_READ_ONLY, `${req.topic}: read-only`)
      : refuse(ctx, correlationId, ErrorCode.TOPIC_READ_ONLY);
  }
  const appended = partition.append(
    { records: req.records, count: req.recordCount, expectedOffset: req.expectedOffset },
    req.ack,
  );
  const failed = (error: unknown) => {
    // The topic was deleted while the batch waited: its records are gone with it.
    if (ctx.registry.isRetired(partition)) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (error instanceof OffsetMismatchError) return ErrorCode.OFFSET_MISMATCH;
    if (error instanceof StorageError) ctx.metrics.storageErrors++;
    return codeForAppendError(error);
  };
  const counted = (result: AppendResult) => {
    ctx.metrics.recordsIn += req.recordCount;
    ctx.metrics.bytesIn += req.records.length;
    return result;
  };
  if (silent) {
    const settled = appended.then(counted, (error: unknown) =>
      refuseSilently(ctx, failed(error), `${partition.name}: ${String(error)}`),
    );
    onUnansweredSettled?.(settled);
    return null;
  }
  // One promise step from the writer's acknowledgement to the answer bytes.
  return appended.then(
    (result) =>
      ctx.registry.isRetired(partition)
        ? refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        : encodeProduceResponse(correlationId, counted(result)),
    (error: unknown) => {
      const code = failed(error);
      if (code !== ErrorCode.OFFSET_MISMATCH) return refuse(ctx, correlationId, code);
      ctx.metrics.refused('OFFSET_MISMATCH');
      return encodeOffsetMismatchResponse(correlationId, (error as OffsetMismatchError).logEndOffset);
    },
  );
}
