import { type AppendWaiter, StorageError } from '@booblik/log';
import { AckPolicy, ErrorCode, encodeProduceResponse, type ProduceRequest } from '@booblik/protocol';
import type { AnswerSink, ApiContext } from './context.js';
import { codeForAppendError, refuse, refuseSilently } from './refusal.js';

/** Told when an ack NONE batch (which has no answer to wait for) is done with: written or refused. */
export interface UnansweredSink {
  settled(): void;
}

/**
 * PRODUCE v1. Checks in the spec's order (decoding was done by the session): unknown topic or
 * partition, then RECORD_TOO_LARGE (the writer refuses the whole batch before writing any of it).
 * The answer goes to `answer`, possibly before this returns; an ack NONE request is never answered
 * (`unanswered` hears when its batch is settled instead).
 */
export function handleProduce(
  req: ProduceRequest,
  correlationId: number,
  ctx: ApiContext,
  answer: AnswerSink,
): void {
  const partition = ctx.registry.get(req.topic, req.partition);
  if (partition === undefined) {
    answer.deliver(refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    return;
  }
  // From the writer's acknowledgement straight to the answer bytes: no promise step in between.
  partition.appendTo(
    { records: req.records, count: req.recordCount },
    req.ack,
    new ProduceAnswer(req, correlationId, ctx, answer),
  );
}

/** PRODUCE with ack NONE: the same checks, nothing ever answered; refusals are counted and logged. */
export function handleUnansweredProduce(
  req: ProduceRequest,
  ctx: ApiContext,
  unanswered: UnansweredSink,
): void {
  const partition = ctx.registry.get(req.topic, req.partition);
  if (partition === undefined) {
    refuseSilently(
      ctx,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      `${req.topic}-${req.partition}: no such topic or partition`,
    );
    unanswered.settled();
    return;
  }
  partition.appendTo(
    { records: req.records, count: req.recordCount },
    AckPolicy.NONE,
    new UnansweredProduce(req, ctx, partition.name, unanswered),
  );
}

function countIn(ctx: ApiContext, req: ProduceRequest): void {
  ctx.metrics.recordsIn += req.recordCount;
  ctx.metrics.bytesIn += req.records.length;
}

function codeForFailure(ctx: ApiContext, error: Error): number {
  if (error instanceof StorageError) ctx.metrics.storageErrors++;
  return codeForAppendError(error);
}

class ProduceAnswer implements AppendWaiter {
  constructor(
    private readonly req: ProduceRequest,
    private readonly correlationId: number,
    private readonly ctx: ApiContext,
    private readonly answer: AnswerSink,
  ) {}

  appended(baseOffset: number, logEndOffset: number): void {
    countIn(this.ctx, this.req);
    this.answer.deliver(encodeProduceResponse(this.correlationId, { baseOffset, logEndOffset }));
  }

  failed(error: Error): void {
    let code: number;
    try {
      code = codeForFailure(this.ctx, error);
    } catch (unexpected) {
      this.answer.broken(unexpected);
      return;
    }
    this.answer.deliver(refuse(this.ctx, this.correlationId, code));
  }
}

class UnansweredProduce implements AppendWaiter {
  constructor(
    private readonly req: ProduceRequest,
    private readonly ctx: ApiContext,
    private readonly partitionName: string,
    private readonly unanswered: UnansweredSink,
  ) {}

  appended(): void {
    countIn(this.ctx, this.req);
    this.unanswered.settled();
  }

  failed(error: Error): void {
    try {
      refuseSilently(this.ctx, codeForFailure(this.ctx, error), `${this.partitionName}: ${String(error)}`);
    } catch (unexpected) {
      this.ctx.logger.error(
        `request failed unexpectedly: ${(unexpected as Error)?.stack ?? String(unexpected)}`,
      );
    }
    this.unanswered.settled();
  }
}
