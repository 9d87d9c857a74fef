/**
 * A consumer of one partition, reading from an offset the caller keeps. Iterate it with `for await`
 * (it never ends on its own: a partition has no end) and stop with break, return() or an AbortSignal;
 * or call poll() for one fetch at a time. After a lost connection it dials again with backoff and
 * resumes from its position. On a broker with FETCH v5 it sends the epoch of the last record it read,
 * so a position whose records the broker lost (a restore from its store) is RecordsLostError, not
 * other records under the same offsets.
 *
 *   idle ──poll / next──> fetching ──> idle
 *     │                      └─(connection lost)─> reconnecting ──> fetching
 *     └────────────── close() from any state ──────────────> closed
 */
import { NO_EPOCH, RecordExceedsMaxBytesError } from '@booblik/protocol';
import { checkCount, checkInt32, checkOffset } from './checks.js';
import { type Clock, delay, systemClock } from './clock.js';
import { AbortError, ConsumerStateError, isConnectionLoss } from './errors.js';
import type { FetchResult } from './fetch-result.js';
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_WAIT_MS,
  DEFAULT_MIN_BYTES,
  DEFAULT_RECONNECT_DELAY_MS,
  DEFAULT_RECONNECT_DELAY_MS_MAX,
} from './limits.js';
import type { FetchSource } from './sources.js';
import { StateMachine } from './state-machine.js';
import { NotPrimaryError } from './topic-errors.js';

export interface ConsumerOptions {
  /** Bytes asked for per fetch (default 1 MiB); a record that can never fit is an error, not a stall. */
  maxBytes?: number;
  /** How long the broker may hold a fetch waiting for records (default 5000; 0 answers at once). */
  maxWaitMs?: number;
  /** Bytes a long fetch waits for (default 1: anything). */
  minBytes?: number;
  /** Stops the consumer: iteration ends, a pending poll() rejects with AbortError. */
  signal?: AbortSignal;
  /** First pause before dialing again after a loss (default 100 ms), doubled per failure. */
  reconnectDelayMs?: number;
  /** Longest pause between attempts (default 5000 ms). */
  reconnectDelayMsMax?: number;
  /** Attempts after a loss before the error reaches the caller (default: no limit, as a partition has no end). */
  reconnectAttemptsMax?: number;
  /** How to open a new connection after a loss (default: the same address and settings). */
  dial?: () => Promise<FetchSource>;
  /** Time source for reconnect pauses. */
  clock?: Clock;
  /** Jitter source in [0, 1): spreads the reconnects of many consumers after a broker restart. */
  random?: () => number;
  /**
   * The epoch of the record before `offset`, kept with the position by a consumer that resumes
   * (`consumer.epoch`); default -1: none known, nothing is checked until the first records.
   */
  epoch?: number;
}

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  /** A view into the fetch response; copy it to keep it long without keeping the whole response. */
  payload: Buffer;
}

/** What records() returns: `for await` over it, or next() and return() by hand. */
export interface RecordIterator extends AsyncIterableIterator<ConsumerRecord> {
  /** Stops the iteration (what break does): no further fetch. */
  return(): Promise<IteratorResult<ConsumerRecord>>;
}

/** A fetch sent ahead of need, for the offset after the records being handed out. */
interface ReadAhead {
  offset: number;
  generation: number;
  /** Undefined when it failed: the fetch is then made again, with the usual handling of errors. */
  result: Promise<FetchResult | undefined>;
  stop: AbortController;
}

type ConsumerState = 'idle' | 'fetching' | 'reconnecting' | 'closed';

export class Consumer implements AsyncIterable<ConsumerRecord> {
  private readonly machine = new StateMachine<ConsumerState>('consumer', 'idle', {
    idle: ['fetching', 'closed'],
    fetching: ['idle', 'reconnecting', 'closed'],
    reconnecting: ['fetching', 'idle', 'closed'],
    closed: [],
  });
  private readonly maxBytes: number;
  private readonly maxWaitMs: number;
  private readonly minBytes: number;
  private readonly reconnectDelayMs: number;
  private readonly reconnectDelayMsMax: number;
  private readonly reconnectAttemptsMax: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly dial: () => Promise<FetchSource>;
  /** Fires on close() and on the caller's signal. */
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  /** The signal fired: a field, so the per-record path skips AbortSignal's getter and its checks. */
  private stopped = false;

  /** The connection fetches go to; undefined after a loss until the next dial. */
  private connection: FetchSource | undefined;
  /** Connections this consumer dialed itself (it closes them); the first one is the caller's. */
  private owned: FetchSource | undefined;
  private readonly given: FetchSource;
  private offset: number;
  /** The epoch of the record before the position (FETCH v5); NO_EPOCH when not known. */
  private lastEpoch: number;
  /** Whether `connection` takes FETCH v5, once known (reset with each new connection). */
  private epochsOn: { connection: FetchSource; spoken: boolean } | undefined;
  private seen: number | undefined;
  /** Bumped by seek(): a fetch started before it is dropped when it returns. */
  private generation = 0;
  /**
   * The last fetch's records, handed out by the iterator from `next` on. An index, not shift(): a
   * shift moves every record behind it, which made a 1 MiB fetch of small records quadratic.
   */
  private buffered: FetchResult | undefined;
  private next = 0;
  /**
   * While the iterator hands out one fetch's records, the next fetch is already out when the last
   * answer showed more records waiting (its high watermark past its last record): the broker reads
   * and sends while the caller works, instead of both taking turns. Only then, and with no wait, so
   * it is never a long poll held on the connection.
   */
  private readAhead: ReadAhead | undefined;
  private iterating = false;

  constructor(
    connection: FetchSource,
    readonly topic: string,
    readonly partition: number,
    offset: number,
    options: ConsumerOptions = {},
  ) {
    checkInt32('partition', partition, 0);
    this.offset = checkOffset('offset', offset);
    this.lastEpoch = checkInt32('epoch', options.epoch ?? NO_EPOCH, NO_EPOCH);
    this.connection = connection;
    this.given = connection;
    this.maxBytes = checkInt32('maxBytes', options.maxBytes ?? DEFAULT_MAX_BYTES, 1);
    this.maxWaitMs = checkInt32('maxWaitMs', options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, 0);
    this.minBytes = Math.min(checkInt32('minBytes', options.minBytes ?? DEFAULT_MIN_BYTES, 0), this.maxBytes);
    this.reconnectDelayMs = checkCount(
      'reconnectDelayMs',
      options.reconnectDelayMs ?? DEFAULT_RECONNECT_DELAY_MS,
    );
    this.reconnectDelayMsMax = checkCount(
      'reconnectDelayMsMax',
      options.reconnectDelayMsMax ?? DEFAULT_RECONNECT_DELAY_MS_MAX,
    );
    const attempts = options.reconnectAttemptsMax ?? Number.POSITIVE_INFINITY;
    this.reconnectAttemptsMax =
      attempts === Number.POSITIVE_INFINITY ? attempts : checkCount('reconnectAttemptsMax', attempts);
    this.clock = options.clock ?? connection.options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.dial = options.dial ?? (() => connection.redial());
    this.signal = options.signal ? AbortSignal.any([this.stop.signal, options.signal]) : this.stop.signal;
    if (this.signal.aborted) this.shutdown();
    else this.signal.addEventListener('abort', () => this.shutdown(), { once: true });
  }

  get state(): ConsumerState {
    return this.machine.state;
  }

  /** The offset to persist after handling the last record received: the next one to read. */
  get position(): number {
    return this.offset;
  }

  /**
   * The epoch of the last record received (-1 when not known: before the first, or from a broker
   * without FETCH v5). Persist it with the position and pass it back as ConsumerOptions.epoch.
   */
  get epoch(): number {
    return this.lastEpoch;
  }

  /** Records between the position and the high watermark of the last fetch; undefined before the first. */
  get lag(): number | undefined {
    return this.seen === undefined ? undefined : Math.max(0, this.seen - this.offset);
  }

  /** The high watermark the last fetch saw; undefined before the first. */
  get highWatermark(): number | undefined {
    return this.seen;
  }

  /**
   * Moves the position; records already fetched and not handed out are dropped. `epoch` is that of
   * the record before `offset` if known (RecordsLostError's, to go on from where records were lost).
   */
  seek(offset: number, epoch = NO_EPOCH): void {
    this.offset = checkOffset('offset', offset);
    this.lastEpoch = checkInt32('epoch', epoch, NO_EPOCH);
    this.dropBuffered();
    this.generation++;
  }

  /**
   * One fetch at the position (a long fetch: it waits up to maxWaitMs for records). Returns whole
   * records, possibly none, and moves the position past them.
   */
  async poll(): Promise<ConsumerRecord[]> {
    this.dropBuffered();
    const fetched = await this.fetchAtPosition();
    if (!fetched) return [];
    this.offset = fetched.fetchOffset + fetched.count;
    if (fetched.count > 0) this.lastEpoch = fetched.epoch;
    const records = new Array<ConsumerRecord>(fetched.count);
    for (let i = 0; i < fetched.count; i++) {
      records[i] = this.toConsumerRecord(fetched.fetchOffset + i, fetched.payloadAt(i));
    }
    return records;
  }

  /**
   * Records one at a time, forever; the position moves past each as it is handed out. Written by hand
   * rather than as an async generator: a generator's yield costs ~0.3 µs a record in extra promise
   * turns, more than the rest of the read path, while a record already fetched is handed out here in
   * one resolved promise.
   */
  records(): RecordIterator {
    if (this.iterating) {
      const refusal = new ConsumerStateError('the consumer is already being iterated');
      const refused: RecordIterator = {
        next: () => Promise.reject(refusal),
        return: () => Promise.resolve({ done: true, value: undefined }),
        [Symbol.asyncIterator]: () => refused,
      };
      return refused;
    }
    this.iterating = true;
    let finished = false;
    /** A fetch under way: a next() called meanwhile waits for it instead of fetching twice. */
    let fetching: Promise<IteratorResult<ConsumerRecord>> | undefined;
    const finish = (): IteratorResult<ConsumerRecord> => {
      if (!finished) {
        finished = true;
        this.iterating = false;
        this.dropBuffered();
      }
      return { done: true, value: undefined };
    };
    const fetchThenTake = async (): Promise<IteratorResult<ConsumerRecord>> => {
      while (!finished && !this.signal.aborted) {
        if (this.hasBuffered()) return this.take();
        try {
          const fetched = (await this.takeReadAhead()) ?? (await this.fetchAtPosition());
          if (finished || this.signal.aborted) break;
          if (fetched) {
            this.buffered = fetched;
            this.next = 0;
            this.startReadAhead(fetched);
          }
        } catch (error) {
          finish();
          if (this.signal.aborted) return { done: true, value: undefined };
          throw error;
        }
      }
      return finish();
    };
    const iterator: RecordIterator = {
      next: () => {
        if (fetching) return fetching.then(() => iterator.next());
        if (!finished && !this.stopped && this.hasBuffered()) {
          return Promise.resolve(this.take());
        }
        fetching = fetchThenTake().finally(() => {
          fetching = undefined;
        });
        return fetching;
      },
      return: () => Promise.resolve(finish()),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  [Symbol.asyncIterator](): RecordIterator {
    return this.records();
  }

  /** Stops: a pending fetch is abandoned, iteration ends, and a connection the consumer dialed is closed. */
  async close(): Promise<void> {
    this.stop.abort(new ConsumerStateError('the consumer is closed'));
    await this.owned?.close();
  }

  /** The next buffered record, handed out: the position moves past it. */
  private take(): IteratorResult<ConsumerRecord> {
    const fetched = this.buffered!;
    const offset = fetched.fetchOffset + this.next;
    const payload = fetched.payloadAt(this.next++);
    this.offset = offset + 1;
    this.lastEpoch = fetched.epoch;
    return { done: false, value: this.toConsumerRecord(offset, payload) };
  }

  private hasBuffered(): boolean {
    return this.buffered !== undefined && this.next < this.buffered.count;
  }

  private dropBuffered(): void {
    this.buffered = undefined;
    this.next = 0;
    this.readAhead?.stop.abort();
    this.readAhead = undefined;
  }

  private startReadAhead(fetched: FetchResult): void {
    const offset = fetched.fetchOffset + fetched.count;
    const connection = this.connection;
    if (fetched.count === 0 || fetched.highWatermark <= offset || connection?.state !== 'open') return;
    const stop = new AbortController();
    const request = {
      topic: this.topic,
      partition: this.partition,
      offset,
      maxBytes: this.maxBytes,
      // After the records being handed out, all of the fetch's one epoch.
      ...(this.epochsOn?.connection === connection && this.epochsOn.spoken
        ? { lastEpoch: fetched.epoch }
        : {}),
    };
    const result = connection.fetch({ ...request, maxWaitMs: 0, minBytes: 0 }, { signal: stop.signal }).then(
      (r) => r,
      () => undefined,
    );
    this.readAhead = { offset, generation: this.generation, result, stop };
  }

  /** The read-ahead's answer if it is for the position and brought records; else undefined. */
  private async takeReadAhead(): Promise<FetchResult | undefined> {
    const ahead = this.readAhead;
    this.readAhead = undefined;
    if (!ahead) return undefined;
    if (ahead.offset !== this.offset || ahead.generation !== this.generation) {
      ahead.stop.abort();
      return undefined;
    }
    const result = await ahead.result;
    if (!result || ahead.generation !== this.generation || result.count === 0) return undefined;
    this.seen = result.highWatermark;
    return result;
  }

  private toConsumerRecord(offset: number, payload: Buffer): ConsumerRecord {
    return { topic: this.topic, partition: this.partition, offset, payload };
  }

  private shutdown(): void {
    this.stopped = true;
    if (!this.machine.is('closed')) this.machine.to('closed');
    this.readAhead?.stop.abort();
    void this.owned?.close();
  }

  /** Fetches at the position until whole records come back, a caught-up wait ends, or an error says why not. */
  /** Undefined when seek() moved the position while the fetch was out: its records are not wanted. */
  private async fetchAtPosition(): Promise<FetchResult | undefined> {
    if (this.machine.is('closed')) throw new AbortError(`consumer of ${this.topic}/${this.partition}`);
    if (!this.machine.is('idle')) throw new ConsumerStateError('a fetch is already in progress');
    const generation = this.generation;
    const offset = this.offset;
    this.machine.to('fetching');
    try {
      const result = await this.fetchWithReconnect(offset);
      if (generation !== this.generation) return undefined;
      this.seen = result.highWatermark;
      if (result.recordExceedsMaxBytes) {
        throw new RecordExceedsMaxBytesError(offset, result.truncatedRecordBytes, this.maxBytes);
      }
      // A truncated tail was dropped by the decoder; the next fetch asks for it again from its start.
      return result;
    } finally {
      if (!this.machine.is('closed')) this.machine.to('idle');
    }
  }

  private async fetchWithReconnect(offset: number): Promise<FetchResult> {
    for (let failures = 0; ; failures++) {
      let withEpoch = false;
      try {
        const connection = await this.currentConnection();
        withEpoch = await this.speaksEpochs(connection);
        return await connection.fetch(
          {
            topic: this.topic,
            partition: this.partition,
            offset,
            maxBytes: this.maxBytes,
            maxWaitMs: this.maxWaitMs,
            minBytes: this.minBytes,
            ...(withEpoch ? { lastEpoch: this.lastEpoch } : {}),
          },
          { signal: this.signal },
        );
      } catch (error) {
        if (
          withEpoch &&
          error instanceof NotPrimaryError &&
          this.epochsOn !== undefined &&
          this.epochsOn.connection.routeOf === undefined
        ) {
          // FETCH v5 follows routes; on a Connection to a cluster broker that is not the primary, v2 is
          // proxied: it goes on so, without epochs. (A Client follows the route itself.)
          this.epochsOn = { connection: this.epochsOn.connection, spoken: false };
          failures--;
          continue;
        }
        if (this.signal.aborted) {
          throw error instanceof AbortError
            ? error
            : new AbortError(`consumer of ${this.topic}/${this.partition}`, { cause: this.signal.reason });
        }
        if (!isConnectionLoss(error) || failures >= this.reconnectAttemptsMax) throw error;
        this.connection = undefined;
        if (!this.machine.is('closed')) this.machine.to('reconnecting');
        try {
          await delay(this.clock, this.backoffMs(failures), this.signal);
        } catch {
          throw new AbortError(`consumer of ${this.topic}/${this.partition}`, { cause: this.signal.reason });
        }
        if (!this.machine.is('closed')) this.machine.to('fetching');
      }
    }
  }

  /** Whether fetches on `connection` carry the epoch (FETCH v5): asked once per connection. */
  private async speaksEpochs(connection: FetchSource): Promise<boolean> {
    if (this.epochsOn?.connection !== connection) {
      this.epochsOn = { connection, spoken: await connection.speaksFetchEpochs() };
    }
    return this.epochsOn.spoken;
  }

  private async currentConnection(): Promise<FetchSource> {
    if (this.connection && this.connection.state === 'open') return this.connection;
    const fresh = await this.dial();
    // A Client stands in for itself after a loss: it is the caller's, never this consumer's to close.
    if (fresh === this.given) {
      this.connection = fresh;
      return fresh;
    }
    if (this.signal.aborted) {
      await fresh.close();
      throw new AbortError(`consumer of ${this.topic}/${this.partition}`, { cause: this.signal.reason });
    }
    void this.owned?.close();
    this.owned = fresh;
    this.connection = fresh;
    return fresh;
  }

  /** Exponential with jitter in its upper half: never below half the step, never above the cap. */
  private backoffMs(failures: number): number {
    const step = Math.min(this.reconnectDelayMsMax, this.reconnectDelayMs * 2 ** Math.min(failures, 30));
    return Math.round(step / 2 + (this.random() * step) / 2);
  }
}
