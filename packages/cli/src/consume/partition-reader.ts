/**
 * One partition of `booblik consume`: reads from a start offset up to an end (the high watermark seen
 * at start, or forever with --follow). A follower waits through what can heal, as kcat does: a
 * retriable refusal (NO_PRIMARY during a failover, NOT_PRIMARY) or a lost broker is retried with
 * backoff after one line on stderr saying why, and a line when reading resumes. It gives up only on
 * what cannot heal, saying what to do: the topic deleted, or its position removed by retention.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BrokerError,
  type Client,
  type Consumer,
  type ConsumerRecord,
  ErrorCode,
  isConnectionLoss,
  RecordExceedsMaxBytesError,
} from '@booblik/client';
import { FOLLOW_RETRY_DELAY_MS, FOLLOW_RETRY_DELAY_MS_MAX } from '../constants.js';
import { MaxBytesTooSmallError, PositionGoneError, TopicDeletedError } from '../errors.js';

/** Without --follow a run reads a finite range, so a lost connection is retried a few times only. */
const RECONNECT_ATTEMPTS_BOUNDED = 3;

export interface ReadContext {
  /** For METADATA and the watch; the readers' fetches too unless `ownClient` gives each its own. */
  client: Client;
  /**
   * A client of its own for one reader. Answers on a connection come back in request order, so a
   * follower's long fetch held for one partition would hold back every other partition's answers
   * behind it: with --follow each partition reads through its own connections.
   */
  ownClient?: () => Promise<Client>;
  topic: string;
  follow: boolean;
  maxBytes: number;
  /** Stops every reader (Ctrl-C, --max-records reached, stdout closed, another reader failed). */
  signal: AbortSignal;
  /** Prints one record; false once nothing more is wanted. */
  emit(record: ConsumerRecord): Promise<boolean>;
  /** One line on stderr. */
  note(line: string): void;
}

/** Reads `partition` from `start` until `end` (exclusive; Infinity with --follow) or the signal. */
export async function readPartition(ctx: ReadContext, partition: number, start: number, end: number) {
  const reader = new PartitionReader(ctx, partition, start, end);
  try {
    while (!(await reader.step())) {}
  } finally {
    await reader.close();
  }
}

class PartitionReader {
  private readonly where: string;
  private position: number;
  /** Why the follower is waiting, once its line is out; undefined while reading goes well. */
  private waitingFor: string | undefined;
  private failures = 0;
  private own: Client | undefined;

  constructor(
    private readonly ctx: ReadContext,
    private readonly partition: number,
    start: number,
    private readonly end: number,
  ) {
    this.where = `${ctx.topic}/${partition}`;
    this.position = start;
  }

  /** Reads until done (true) or a failure it waits through (false: step again). */
  async step(): Promise<boolean> {
    const { ctx, end } = this;
    if (this.position >= end || ctx.signal.aborted) return true;
    let consumer: Consumer | undefined;
    try {
      consumer = await this.open();
      if (this.waitingFor !== undefined) {
        const records = await consumer.poll();
        ctx.note(`${this.where}: resumed at offset ${this.position}`);
        this.waitingFor = undefined;
        this.failures = 0;
        for (const record of records) {
          if (record.offset >= end || !(await ctx.emit(record))) return true;
          this.position = record.offset + 1;
        }
        return false; // on to the long fetches
      }
      for await (const record of consumer) {
        if (record.offset >= end || !(await ctx.emit(record))) return true;
        this.position = consumer.position;
        this.failures = 0;
        if (this.position >= end) return true;
      }
      return true; // the iteration ends only when the signal stops it
    } catch (error) {
      if (ctx.signal.aborted) return true;
      if (error instanceof RecordExceedsMaxBytesError) {
        throw new MaxBytesTooSmallError(error.offset, error.recordBytes, error.maxBytes);
      }
      const verdict = await judge(ctx, this.partition, this.position, error);
      if (verdict !== 'wait' || !ctx.follow) throw verdict === 'wait' ? error : verdict;
      if (this.waitingFor === undefined) {
        this.waitingFor = (error as Error).message;
        ctx.note(
          `${this.where}: waiting at offset ${this.position}: ${this.waitingFor}; retrying with backoff (Ctrl-C stops)`,
        );
      }
      await sleep(backoffMs(this.failures++), undefined, { signal: ctx.signal }).catch(() => {});
      return false;
    } finally {
      await consumer?.close();
    }
  }

  async close(): Promise<void> {
    await this.own?.close();
  }

  /** A consumer at the position; after a failure, one that answers at once, to learn that it healed. */
  private async open(): Promise<Consumer> {
    const { ctx } = this;
    if (ctx.ownClient && this.own === undefined) this.own = await ctx.ownClient();
    const client = this.own ?? ctx.client;
    const probe = this.waitingFor !== undefined;
    return client.consumer(ctx.topic, this.partition, this.position, {
      maxBytes: ctx.maxBytes,
      // Reading up to a known end, or asking whether it healed: answer at once, hold nothing.
      ...(ctx.follow && !probe ? {} : { maxWaitMs: 0 }),
      // A follower does its own waiting, so that it can say so: the consumer gives up at once.
      reconnectAttemptsMax: ctx.follow ? 0 : RECONNECT_ATTEMPTS_BOUNDED,
      signal: ctx.signal,
    });
  }
}

/**
 * 'wait' for a failure that can heal; else the error to end with, explained when METADATA can say
 * more (the topic is gone; the position is out of the partition's range, and which way).
 */
async function judge(
  ctx: ReadContext,
  partition: number,
  position: number,
  error: unknown,
): Promise<'wait' | Error> {
  if (isConnectionLoss(error) || (error instanceof BrokerError && error.retriable)) return 'wait';
  if (!(error instanceof BrokerError)) return error as Error;
  const code = error.code;
  if (code !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && code !== ErrorCode.OFFSET_OUT_OF_RANGE) return error;
  let offsets: { logStartOffset: number; highWatermark: number } | undefined;
  try {
    const [described] = await ctx.client.metadata(ctx.topic);
    offsets = described?.partitions.find((p) => p.partition === partition);
  } catch (metadataError) {
    if (metadataError instanceof BrokerError && metadataError.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
      return new TopicDeletedError(ctx.topic);
    }
    return isConnectionLoss(metadataError) ||
      (metadataError instanceof BrokerError && metadataError.retriable)
      ? 'wait'
      : error;
  }
  if (offsets === undefined) return error;
  if (position < offsets.logStartOffset || position > offsets.highWatermark) {
    return new PositionGoneError(
      ctx.topic,
      partition,
      position,
      offsets.logStartOffset,
      offsets.highWatermark,
    );
  }
  // The topic and the position are there after all (a broker behind the others): try again.
  return 'wait';
}

/** Exponential with jitter in its upper half: never below half the step, never above the cap. */
function backoffMs(failures: number): number {
  const step = Math.min(FOLLOW_RETRY_DELAY_MS_MAX, FOLLOW_RETRY_DELAY_MS * 2 ** Math.min(failures, 30));
  return Math.round(step / 2 + (Math.random() * step) / 2);
}
