import { type AppendWaiter, OffsetMismatchError, StorageError } from '@booblik/log';
import {
  AckPolicy,
  type Capabilities,
  ErrorCode,
  encodeOffsetMismatchResponse,
  encodeProduceResponse,
  type ProduceRequest,
} from '@booblik/protocol';
import type { ServedPartition } from '../partitions.js';
import type { AnswerSink, Reply } from '../reply.js';
import type { ApiContext } from './context.js';
import { codeForAppendError, refuse, refuseSilently, refuseUnrouted } from './refusal.js';

/** Told when an ack NONE batch (which has no answer to wait for) is done with: written or refused. */
export interface UnansweredSink {
  settled(): void;
}

/**
 * PRODUCE v1 to v3. Checks in the spec's order (decoding was done by the session): unknown topic or
 * partition (or served elsewhere, or read-only), then RECORD_TOO_LARGE and, from v2, the expected
 * offset (the writer refuses the whole batch before writing any of it). The answer goes to `answer`,
 * possibly before this returns: from the writer's acknowledgement straight to the answer bytes.
 * A partition served elsewhere is proxied when the version is (`capabilities.proxied`), else
 * refused NOT_PRIMARY with its route.
 */
export function handleProduce(
  req: ProduceRequest,
  capabilities: Capabilities,
  correlationId: number,
  ctx: ApiContext,
  answer: AnswerSink,
): void {
  const decision = ctx.router.forProduce(req.topic, req.partition, capabilities);
  switch (decision.kind) {
    case 'proxied':
      ctx.proxy!.produce(req, correlationId, decision.route, answer);
      return;
    case 'unknown':
      answer.deliver(refuseUnrouted(ctx, correlationId, decision));
      return;
    case 'primary': {
      const partition = decision.partition;
      partition.appendTo(
        batchOf(req),
        req.ack,
        new ProduceAnswer(req, correlationId, ctx, partition, answer),
      );
    }
  }
}

/** PRODUCE with ack NONE: the same checks, nothing ever answered; refusals are counted and logged. */
export function handleUnansweredProduce(
  req: ProduceRequest,
  capabilities: Capabilities,
  ctx: ApiContext,
  unanswered: UnansweredSink,
): void {
  const decision = ctx.router.forProduce(req.topic, req.partition, capabilities);
  if (decision.kind === 'proxied') {
    ctx.proxy!.produceUnanswered(req, decision.route);
    unanswered.settled();
    return;
  }
  if (decision.kind === 'unknown') {
    refuseSilently(ctx, decision.code, decision.what);
    unanswered.settled();
    return;
  }
  const partition = decision.partition;
  partition.appendTo(batchOf(req), AckPolicy.NONE, new UnansweredProduce(req, ctx, partition, unanswered));
}

function batchOf(req: ProduceRequest) {
  return { records: req.records, count: req.recordCount, expectedOffset: req.expectedOffset };
}

function countIn(ctx: ApiContext, req: ProduceRequest): void {
  ctx.metrics.recordsIn += req.recordCount;
  ctx.metrics.bytesIn += req.records.length;
}

/**
 * The partition left this broker while a batch waited, and the topic no longer has it (deleted):
 * its records are gone with it. One that moved to another broker still has them there.
 */
function goneWithItsTopic(ctx: ApiContext, partition: ServedPartition): boolean {
  if (!ctx.registry.isRetired(partition)) return false;
  const spec = ctx.topics.get(partition.topic);
  return spec === undefined || partition.id >= spec.partitions;
}

function codeForFailure(ctx: ApiContext, partition: ServedPartition, error: Error): number {
  if (goneWithItsTopic(ctx, partition)) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  if (error instanceof OffsetMismatchError) return ErrorCode.OFFSET_MISMATCH;
  if (error instanceof StorageError) ctx.metrics.storageErrors++;
  return codeForAppendError(error);
}

class ProduceAnswer implements AppendWaiter {
  constructor(
    private readonly req: ProduceRequest,
    private readonly correlationId: number,
    private readonly ctx: ApiContext,
    private readonly partition: ServedPartition,
    private readonly answer: AnswerSink,
  ) {}

  appended(baseOffset: number, logEndOffset: number): void {
    if (goneWithItsTopic(this.ctx, this.partition)) {
      this.answer.deliver(refuse(this.ctx, this.correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      return;
    }
    countIn(this.ctx, this.req);
    this.answer.deliver(encodeProduceResponse(this.correlationId, { baseOffset, logEndOffset }));
  }

  failed(error: Error): void {
    let reply: Reply;
    try {
      const code = codeForFailure(this.ctx, this.partition, error);
      if (code === ErrorCode.OFFSET_MISMATCH) {
        this.ctx.metrics.refused('OFFSET_MISMATCH');
        reply = encodeOffsetMismatchResponse(this.correlationId, (error as OffsetMismatchError).logEndOffset);
      } else {
        reply = refuse(this.ctx, this.correlationId, code);
      }
    } catch (unexpected) {
      this.answer.broken(unexpected);
      return;
    }
    this.answer.deliver(reply);
  }
}

class UnansweredProduce implements AppendWaiter {
  constructor(
    private readonly req: ProduceRequest,
    private readonly ctx: ApiContext,
    private readonly partition: ServedPartition,
    private readonly unanswered: UnansweredSink,
  ) {}

  appended(): void {
    countIn(this.ctx, this.req);
    this.unanswered.settled();
  }

  failed(error: Error): void {
    try {
      refuseSilently(
        this.ctx,
        codeForFailure(this.ctx, this.partition, error),
        `${this.partition.name}: ${String(error)}`,
      );
    } catch (unexpected) {
      this.ctx.logger.error(
        `request failed unexpectedly: ${(unexpected as Error)?.stack ?? String(unexpected)}`,
      );
    }
    this.unanswered.settled();
  }
}
