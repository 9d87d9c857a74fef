import { type AppendResult, StorageError } from '@booblik/log';
import { AckPolicy, ErrorCode, encodeProduceResponse, type ProduceRequest } from '@booblik/protocol';
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
  const partition = ctx.registry.get(req.topic, req.partition);
  if (partition === undefined) {
    const what = `${req.topic}-${req.partition}: no such topic or partition`;
    return silent
      ? refuseSilently(ctx, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, what)
      : refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
  const appended = partition.append({ records: req.records, count: req.recordCount }, req.ack);
  const failed = (error: unknown) => {
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
    (result) => encodeProduceResponse(correlationId, counted(result)),
    (error: unknown) => refuse(ctx, correlationId, failed(error)),
  );
}
