import { LogClosedError, OffsetOutOfRangeError, type ReadResult, StorageError } from '@booblik/log';
import {
  type Capabilities,
  ErrorCode,
  encodeFetchResponseHeader,
  encodeFetchResponseHeaderV5,
  encodeRecordsLostResponse,
  type FetchRequest,
  fetchWaitMsMax,
  NO_EPOCH,
  type RecordsLost,
  type TimerHandle,
} from '@booblik/protocol';
import { fetchPayloadBytesMax, fetchPayloadBytesMaxV5 } from '../limits.js';
import type { ServedPartition } from '../partitions.js';
import type { AnswerSink, Reply } from '../reply.js';
import type { ApiContext } from './context.js';
import { refuse, refuseUnrouted } from './refusal.js';

/** Why a held fetch ends before its data or its deadline: the client left, or the broker is stopping. */
export type HoldEnd = 'disconnect' | 'shutdown';

/** How a session lets a held fetch know the connection or the broker is going away. */
export interface HoldScope {
  /** Registers a callback for the end of the scope; returns a function that unregisters it. */
  onEnd(callback: (reason: HoldEnd) => void): () => void;
}

/**
 * FETCH v1 to v5. Unknown (topic, partition) is refused at once. With a wait, the request is held
 * until max(minBytes, 1) bytes are readable at fetchOffset, or the wait (capped at 60 s) ends; a
 * write that lands meanwhile wakes it at once. Offsets are checked against the log after the wait,
 * so an offset just past the end is answered as soon as it is written. The payload is file bytes as
 * they are, behind the response header: no record is parsed here. The answer goes to `answer`, at
 * once when no disk read is needed: a woken consumer is answered inside the write that woke it.
 * A v5 request (the one that carries lastEpoch) is checked against the epochs first, and its answer
 * says the epoch of its records. Where a partition served elsewhere is read is the version's
 * capabilities: from a replica here (`replicaReadable`), proxied (`proxied`), or NOT_PRIMARY.
 */
export function handleFetch(
  req: FetchRequest,
  capabilities: Capabilities,
  correlationId: number,
  ctx: ApiContext,
  scope: HoldScope,
  answer: AnswerSink,
): void {
  const decision = ctx.router.forFetch(req.topic, req.partition, req.fetchOffset, capabilities);
  switch (decision.kind) {
    case 'replica':
      ctx.metrics.replicaReads++;
      serveHere(decision.partition, req, correlationId, ctx, scope, answer, true);
      return;
    case 'primary':
      serveHere(decision.partition, req, correlationId, ctx, scope, answer, false);
      return;
    case 'proxied':
      ctx.proxy!.fetch(req, correlationId, decision.route, answer, decision.fromReplica);
      return;
    case 'unknown':
      answer.deliver(refuseUnrouted(ctx, correlationId, decision));
      return;
  }
}

/**
 * FETCH v5: the epoch the consumer read last, as this log knows it (the largest at or below
 * lastEpoch), ended before fetchOffset: the records it read from that end up to its position are not
 * these (a restore lost them, and the offsets went to new records). Only an epoch that has ended is
 * judged: at or past the latest one, a position past the end is the usual out of range or wait.
 */
function recordsLost(partition: ServedPartition, req: FetchRequest): RecordsLost | null {
  const lastEpoch = req.lastEpoch ?? NO_EPOCH;
  if (lastEpoch === NO_EPOCH || lastEpoch >= partition.epochs.latestEpoch) return null;
  const end = partition.epochs.endOf(lastEpoch, partition.logEndOffset);
  return end.endOffset < req.fetchOffset ? end : null;
}

/**
 * Answers from the copy open here: the primary's, or (fromReplica) an in-sync replica's, whose high
 * watermark can trail the primary's: an offset between it and the log end waits as at the high
 * watermark, and is answered empty if the wait ends first.
 */
function serveHere(
  partition: ServedPartition,
  req: FetchRequest,
  correlationId: number,
  ctx: ApiContext,
  scope: HoldScope,
  answer: AnswerSink,
  fromReplica: boolean,
): void {
  const payloadBytesMax = req.lastEpoch === undefined ? fetchPayloadBytesMax : fetchPayloadBytesMaxV5;
  if (req.maxBytes > payloadBytesMax) {
    // One answer is one frame: serve at most what fits it. minBytes is capped with it, or a long poll
    // for more than a frame could never be satisfied and would always run to its deadline.
    req = {
      ...req,
      maxBytes: payloadBytesMax,
      minBytes: Math.min(req.minBytes, payloadBytesMax),
    };
  }
  const lost = recordsLost(partition, req);
  if (lost !== null) {
    ctx.metrics.refused('RECORDS_LOST');
    answer.deliver(encodeRecordsLostResponse(correlationId, lost));
    return;
  }
  const waitMs = Math.min(req.maxWaitMs, fetchWaitMsMax);
  // Below the log start nothing can ever arrive: waiting would only delay the refusal.
  if (waitMs === 0 || req.fetchOffset < partition.logStartOffset) {
    answerNowOrLater(partition, req, correlationId, ctx, answer, fromReplica);
    return;
  }
  new HeldFetch(partition, req, correlationId, ctx, scope, waitMs, answer, fromReplica).start();
}

enum HoldState {
  Checking,
  Waiting,
  Done,
}

/**
 * One long poll: Checking (is enough already there?) -> Waiting (subscribed to the high watermark,
 * a timer running) -> Done (answered, or dropped because the client left).
 */
class HeldFetch {
  private state = HoldState.Checking;
  private timer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private unscope: (() => void) | undefined;
  private unretire: (() => void) | undefined;
  private rereading = false;
  private readonly need: number;

  constructor(
    private readonly partition: ServedPartition,
    private readonly req: FetchRequest,
    private readonly correlationId: number,
    private readonly ctx: ApiContext,
    private readonly scope: HoldScope,
    private readonly waitMs: number,
    private readonly answer: AnswerSink,
    private readonly fromReplica: boolean,
  ) {
    this.need = Math.max(req.minBytes, 1);
  }

  start(): void {
    void this.check();
  }

  /** Reads what is there; answers if it is enough, otherwise (first time) starts waiting. */
  private async check(): Promise<void> {
    const hw = this.partition.highWatermark.value;
    if (this.req.fetchOffset < hw) {
      let result: ReadResult;
      try {
        result = await this.partition.read(this.req.fetchOffset, this.req.maxBytes);
      } catch (error) {
        return this.finish(error);
      }
      if (this.state === HoldState.Done) return;
      if (this.ctx.registry.isRetired(this.partition)) {
        result.release?.();
        return this.finish();
      }
      if (result.bytes >= this.need) return this.respond(result);
    }
    if (this.state === HoldState.Checking) this.wait(hw);
  }

  private wait(seenHighWatermark: number): void {
    this.state = HoldState.Waiting;
    this.ctx.metrics.heldFetches++;
    this.timer = this.ctx.clock.setTimeout(() => void this.finish(), this.waitMs);
    this.unscope = this.scope.onEnd((reason) => {
      if (reason === 'shutdown') void this.finish();
      else this.drop();
    });
    // The topic deleted under the wait: answered (UNKNOWN_TOPIC_OR_PARTITION by readAnswer), never dropped.
    this.unretire = this.ctx.registry.onRetire(this.partition, () => void this.finish());
    this.unsubscribe = this.partition.highWatermark.subscribe(seenHighWatermark, (hw) => {
      if (this.state !== HoldState.Waiting || hw <= this.req.fetchOffset) return;
      if (this.need === 1) {
        void this.finish();
        return;
      }
      // minBytes > 1: look again, one read at a time (later advances are covered by this read).
      if (this.rereading) return;
      this.rereading = true;
      void this.check().finally(() => {
        this.rereading = false;
      });
    });
  }

  private cleanup(): void {
    if (this.state === HoldState.Waiting) this.ctx.metrics.heldFetches--;
    this.state = HoldState.Done;
    if (this.timer !== undefined) this.ctx.clock.clearTimeout(this.timer);
    this.unsubscribe?.();
    this.unscope?.();
    this.unretire?.();
  }

  /** The client left: nobody to answer. */
  private drop(): void {
    this.cleanup();
    this.answer.deliver([]);
  }

  private respond(result: ReadResult): void {
    this.cleanup();
    this.answer.deliver(encodeReply(this.correlationId, result, this.ctx, this.partition, this.req));
  }

  /** The wait ended (deadline, data, shutdown): answer with whatever the log holds now. */
  private async finish(error?: unknown): Promise<void> {
    if (this.state === HoldState.Done) return;
    this.cleanup();
    if (error !== undefined) {
      this.settle(error);
      return;
    }
    answerNowOrLater(this.partition, this.req, this.correlationId, this.ctx, this.answer, this.fromReplica);
  }

  private settle(error: unknown): void {
    let reply: Reply;
    try {
      reply = refuseRead(error, this.partition, this.req, this.correlationId, this.ctx);
    } catch (unexpected) {
      this.answer.broken(unexpected);
      return;
    }
    this.answer.deliver(reply);
  }
}

/** The answer after any wait, delivered at once when no disk read is needed, else after the read. */
function answerNowOrLater(
  partition: ServedPartition,
  req: FetchRequest,
  correlationId: number,
  ctx: ApiContext,
  answer: AnswerSink,
  fromReplica: boolean,
): void {
  if (ctx.registry.isRetired(partition)) {
    answer.deliver(refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    return;
  }
  if (fromReplica && req.fetchOffset > partition.highWatermark.value) {
    // Committed on the primary, not yet known committed here: nothing to show yet, and no refusal.
    answer.deliver(responseHeader(correlationId, partition.highWatermark.value, 0, partition, req));
    return;
  }
  let now: ReadResult | null;
  try {
    now = partition.readNow(req.fetchOffset, req.maxBytes);
  } catch (error) {
    let reply: Reply;
    try {
      reply = refuseRead(error, partition, req, correlationId, ctx);
    } catch (unexpected) {
      answer.broken(unexpected);
      return;
    }
    answer.deliver(reply);
    return;
  }
  if (now !== null) {
    answer.deliver(encodeReply(correlationId, now, ctx, partition, req));
    return;
  }
  readAnswer(partition, req, correlationId, ctx).then(
    (reply) => answer.deliver(reply),
    (error: unknown) => answer.broken(error),
  );
}

/** The answer after any wait: out of range, empty at the high watermark, or bytes from the log. */
async function readAnswer(
  partition: ServedPartition,
  req: FetchRequest,
  correlationId: number,
  ctx: ApiContext,
): Promise<Reply> {
  const deleted = () => refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (ctx.registry.isRetired(partition)) return deleted();
  try {
    const result = await partition.read(req.fetchOffset, req.maxBytes);
    if (!ctx.registry.isRetired(partition)) return encodeReply(correlationId, result, ctx, partition, req);
    result.release?.();
    return deleted();
  } catch (error) {
    return refuseRead(error, partition, req, correlationId, ctx);
  }
}

/**
 * The answer to a read the log refused. Each is the world's doing, not a bug, so it gets a code and
 * the connection lives: a disk that fails the read (EIO) or a partition closed under the read is
 * STORAGE_ERROR (retriable), or UNKNOWN_TOPIC_OR_PARTITION once the partition is no longer served.
 * Anything else is our bug and is thrown.
 */
function refuseRead(
  error: unknown,
  partition: ServedPartition,
  req: FetchRequest,
  correlationId: number,
  ctx: ApiContext,
): Reply {
  // A partition deleted under the read: its topic is gone, whatever the read failed on.
  if (ctx.registry.isRetired(partition) || ctx.registry.get(req.topic, req.partition) !== partition)
    return refuse(ctx, correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (error instanceof OffsetOutOfRangeError)
    return refuse(ctx, correlationId, ErrorCode.OFFSET_OUT_OF_RANGE);
  if (!(error instanceof StorageError || error instanceof LogClosedError)) throw error;
  if (error instanceof StorageError) ctx.metrics.storageErrors++;
  ctx.noisyLog.warn(`FETCH ${partition.name} at offset ${req.fetchOffset} refused: ${error.message}`);
  return refuse(ctx, correlationId, ErrorCode.STORAGE_ERROR);
}

function encodeReply(
  correlationId: number,
  result: ReadResult,
  ctx: ApiContext,
  partition: ServedPartition,
  req: FetchRequest,
): Reply {
  ctx.metrics.fetchBytesOut += result.bytes;
  const pieces = [
    responseHeader(correlationId, result.highWatermark, result.bytes, partition, req),
    ...result.chunks,
  ];
  return result.release === undefined ? pieces : { pieces, release: result.release };
}

/** The answer's header: v1's, or v5's with the epoch of the record at fetchOffset and where it ends. */
function responseHeader(
  correlationId: number,
  highWatermark: number,
  payloadBytes: number,
  partition: ServedPartition,
  req: FetchRequest,
): Buffer {
  if (req.lastEpoch === undefined)
    return encodeFetchResponseHeader(correlationId, highWatermark, payloadBytes);
  const span = partition.epochs.spanAt(req.fetchOffset);
  const epochEndOffset = span.nextStartOffset ?? -1;
  return encodeFetchResponseHeaderV5(
    correlationId,
    highWatermark,
    { epoch: span.epoch, epochEndOffset },
    payloadBytes,
  );
}
