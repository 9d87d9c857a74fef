/**
 * One partition of `booblik consume`: reads from a start offset up to an end (the high watermark seen
 * at start, or forever with --follow).
 */
import { type Client, type Consumer, type ConsumerRecord, RecordExceedsMaxBytesError } from '@booblik/client';
import { MaxBytesTooSmallError } from '../errors.js';

/** Without --follow a run reads a finite range, so a lost connection is retried a few times only. */
const RECONNECT_ATTEMPTS_BOUNDED = 3;

export interface ReadContext {
  /** For METADATA; the readers' fetches too unless `ownClient` gives each its own. */
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
  private position: number;
  private own: Client | undefined;

  constructor(
    private readonly ctx: ReadContext,
    private readonly partition: number,
    start: number,
    private readonly end: number,
  ) {
    this.position = start;
  }

  /** Reads until done (true). */
  async step(): Promise<boolean> {
    const { ctx, end } = this;
    if (this.position >= end || ctx.signal.aborted) return true;
    let consumer: Consumer | undefined;
    try {
      consumer = await this.open();
      for await (const record of consumer) {
        if (record.offset >= end || !(await ctx.emit(record))) return true;
        this.position = consumer.position;
        if (this.position >= end) return true;
      }
      return true; // the iteration ends only when the signal stops it
    } catch (error) {
      if (ctx.signal.aborted) return true;
      if (error instanceof RecordExceedsMaxBytesError) {
        throw new MaxBytesTooSmallError(error.offset, error.recordBytes, error.maxBytes);
      }
      throw error;
    } finally {
      await consumer?.close();
    }
  }

  async close(): Promise<void> {
    await this.own?.close();
  }

  private async open(): Promise<Consumer> {
    const { ctx } = this;
    if (ctx.ownClient && this.own === undefined) this.own = await ctx.ownClient();
    const client = this.own ?? ctx.client;
    return client.consumer(ctx.topic, this.partition, this.position, {
      maxBytes: ctx.maxBytes,
      // Reading up to a known end: answer at once rather than hold the fetch for records.
      ...(ctx.follow ? {} : { maxWaitMs: 0 }),
      reconnectAttemptsMax: ctx.follow ? Number.POSITIVE_INFINITY : RECONNECT_ATTEMPTS_BOUNDED,
      signal: ctx.signal,
    });
  }
}
