/**
 * A producer for records that arrive one at a time. Records gather in one batch per partition until
 * the batch is full (maxBatchRecords) or has waited lingerMs; sealed batches go out with up to
 * maxInFlight PRODUCE requests awaiting answers at once, at most maxInFlightPerPartition (1) of them
 * to one partition. At most maxQueuedRecords records sit in batches; beyond that send() waits its
 * turn, so memory stays bounded when the broker is slower than the caller. The producer retries
 * nothing itself (a Client resends what it may, see Client): a failed request fails exactly the
 * records of its batch. With one batch per partition in flight, a partition's next batch goes only
 * once the one before is acknowledged or has failed for good, so records land in send order even
 * when the Client resends a batch across a failover.
 *
 *   open ──close()──> closing ──(flushed, connection closed)──> closed
 *     └──────(connection lost: everything waiting fails)──────> failed ──close()──> closed
 */
import {
  AckPolicy,
  type AckPolicyValue,
  frameBytesMax,
  lengthPrefixBytes,
  OFFSET_UNKNOWN,
} from '@booblik/protocol';
import { Batch, type BatchEntry, produceFrameOverheadBytes, produceRecordBytes } from './batch.js';
import { checkCount, checkInt32, checkPayload } from './checks.js';
import { Client, type ClientOptions } from './client.js';
import { type Clock, systemClock } from './clock.js';
import { Connection } from './connection.js';
import { InvalidArgumentError, ProducerClosedError, RequestTooLargeError } from './errors.js';
import {
  DEFAULT_LINGER_MS,
  DEFAULT_MAX_BATCH_RECORDS,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_MAX_IN_FLIGHT_PER_PARTITION,
  DEFAULT_MAX_QUEUED_RECORDS,
} from './limits.js';
import { StateMachine } from './state-machine.js';
import { type Bytes, Topic, toBytes } from './topic.js';

export interface ProducerOptions {
  /** Default WRITTEN. Under NONE every send() resolves with OFFSET_UNKNOWN (-1) once written to the socket. */
  ack?: AckPolicyValue;
  /** How long a batch waits for more records before it goes (default 5). */
  lingerMs?: number;
  /** Records per PRODUCE request; a full batch goes at once (default 100). */
  maxBatchRecords?: number;
  /** PRODUCE requests awaiting an answer at once, across partitions (default 5). */
  maxInFlight?: number;
  /**
   * PRODUCE requests to one partition awaiting an answer at once (default 1: send order kept across
   * failovers). More pipelines a partition's batches, at the cost of order: a batch the Client
   * resends after a failover can land after later ones.
   */
  maxInFlightPerPartition?: number;
  /** Records accepted and not yet answered before send() waits (default 10 000). */
  maxQueuedRecords?: number;
  /** Time source for linger windows (tests pass a manual clock). */
  clock?: Clock;
}

export interface ProducerSendOptions {
  /** Picks the partition with FNV-1a; no key (and no partition) takes the next partition in turn. */
  key?: Bytes | null;
  /** Sends to this partition, skipping the partitioner (and the METADATA it needs). */
  partition?: number;
}

type ProducerState = 'open' | 'closing' | 'closed' | 'failed';

interface Waiting {
  topic: string;
  payload: Uint8Array;
  key: Bytes | null | undefined;
  partition: number | undefined;
  seq: number;
  resolve(offset: number): void;
  reject(error: Error): void;
}

export class Producer {
  private readonly machine = new StateMachine<ProducerState>('producer', 'open', {
    open: ['closing', 'failed'],
    closing: ['closed', 'failed'],
    failed: ['closed'],
    closed: [],
  });
  private readonly ack: AckPolicyValue;
  private readonly lingerMs: number;
  private readonly maxBatchRecords: number;
  private readonly maxInFlight: number;
  private readonly maxInFlightPerPartition: number;
  private readonly maxQueuedRecords: number;
  private readonly clock: Clock;

  /** send() calls not yet in a batch, in call order (waiting for room or for the topic's partitions). */
  private readonly waiting: Waiting[] = [];
  private readonly open = new Map<string, Batch>();
  /** Sealed batches not yet sent, in seal order (which is send order within a partition). */
  private sealed: Batch[] = [];
  private inFlight = 0;
  /** `topic\0partition` -> its requests in flight (absent: none). */
  private readonly inFlightTo = new Map<string, number>();
  /** Records in batches (open, sealed or in flight). */
  private queued = 0;
  private nextSeq = 0;
  /** Sequence numbers not yet settled; a Set iterates in insertion order, so its first is the lowest. */
  private readonly unsettled = new Set<number>();
  /** Records with seq below this are sealed as they are admitted: a flush is waiting for them. */
  private flushMark = 0;
  private flushWaiters: { mark: number; resolve(): void }[] = [];
  private roomWaiters: (() => void)[] = [];
  private readonly topics = new Map<string, Topic | Promise<void>>();
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;

  /**
   * Connects and returns a producer that owns the connection (close() closes it). A list of
   * addresses connects a Client instead: each batch then goes to its partition's primary, following
   * routes (see Client); one address keeps one connection, as before (a cluster broker proxies).
   */
  static async connect(
    address: string | readonly string[],
    options: ProducerOptions & ClientOptions = {},
  ): Promise<Producer> {
    const connection =
      typeof address === 'string'
        ? await Connection.connect(address, options)
        : await Client.connect(address, options);
    return new Producer(connection, options);
  }

  /**
   * Takes ownership of `connection` (a Connection, or a Client that follows routes): the producer
   * closes it, and fails everything when a Connection is lost.
   */
  constructor(
    private readonly connection: Connection | Client,
    options: ProducerOptions = {},
  ) {
    this.ack = options.ack ?? AckPolicy.WRITTEN;
    if (this.ack !== AckPolicy.NONE && this.ack !== AckPolicy.WRITTEN && this.ack !== AckPolicy.FORCED) {
      throw new InvalidArgumentError(`ack: ${this.ack}, expected AckPolicy.NONE, WRITTEN or FORCED`);
    }
    this.lingerMs = checkCount('lingerMs', options.lingerMs ?? DEFAULT_LINGER_MS);
    this.maxBatchRecords = checkCount(
      'maxBatchRecords',
      options.maxBatchRecords ?? DEFAULT_MAX_BATCH_RECORDS,
      1,
    );
    this.maxInFlight = checkCount('maxInFlight', options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, 1);
    this.maxInFlightPerPartition = checkCount(
      'maxInFlightPerPartition',
      options.maxInFlightPerPartition ?? DEFAULT_MAX_IN_FLIGHT_PER_PARTITION,
      1,
    );
    this.maxQueuedRecords = checkCount(
      'maxQueuedRecords',
      options.maxQueuedRecords ?? DEFAULT_MAX_QUEUED_RECORDS,
      1,
    );
    this.clock = options.clock ?? systemClock;
    void connection.closed.then((reason) => {
      if (reason) this.onConnectionLost(reason);
    });
  }

  get state(): ProducerState {
    return this.machine.state;
  }

  /** Records in batches: accepted, not yet answered. */
  get queuedRecords(): number {
    return this.queued;
  }

  /** send() calls waiting for room in the queue (or for their topic's partitions). */
  get waitingSends(): number {
    return this.waiting.length;
  }

  get inFlightRequests(): number {
    return this.inFlight;
  }

  /**
   * Queues one record; resolves with its offset once the broker answered its batch (OFFSET_UNKNOWN
   * under ack NONE). When the queue is full the record waits its turn before joining a batch.
   */
  send(topic: string, payload: Bytes, options: ProducerSendOptions = {}): Promise<number> {
    if (!this.machine.is('open')) {
      return Promise.reject(
        new ProducerClosedError(
          this.failure ? `the producer failed: ${this.failure.message}` : 'the producer is closed',
          { cause: this.failure },
        ),
      );
    }
    const bytes = toBytes(payload);
    try {
      if (bytes.length === 0) checkPayload(`payload of a record for ${topic}`, bytes);
      if (options.partition !== undefined) checkInt32('partition', options.partition, 0);
    } catch (error) {
      return Promise.reject(error);
    }
    const frameBytes = produceFrameOverheadBytes(topic) + produceRecordBytes(bytes) - lengthPrefixBytes;
    if (frameBytes > frameBytesMax) {
      return Promise.reject(new RequestTooLargeError(`PRODUCE ${topic}`, frameBytes, frameBytesMax));
    }
    const seq = this.nextSeq++;
    this.unsettled.add(seq);
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({
        topic,
        payload: bytes,
        key: options.key,
        partition: options.partition,
        seq,
        resolve: (offset) => {
          this.unsettled.delete(seq);
          resolve(offset);
        },
        reject: (error) => {
          this.unsettled.delete(seq);
          reject(error);
        },
      });
      this.pump();
    });
  }

  /** Resolves when a send() would join a batch at once: await it before sending to follow backpressure. */
  ready(): Promise<void> {
    if (this.hasRoom()) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Sends every batch now, without waiting out the linger; resolves once every earlier send() settled. */
  flush(): Promise<void> {
    const mark = this.nextSeq;
    this.flushMark = Math.max(this.flushMark, mark);
    for (const batch of [...this.open.values()]) this.seal(batch);
    return new Promise((resolve) => {
      this.flushWaiters.push({ mark, resolve });
      this.checkFlushed();
    });
  }

  /** Refuses new records, flushes what was sent, then closes the connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.machine.is('open')) this.machine.to('closing');
      await this.flush();
      await this.connection.close();
      if (!this.machine.is('closed')) this.machine.to('closed');
    })();
    return this.closing;
  }

  private hasRoom(): boolean {
    return !this.machine.is('open') || (this.waiting.length === 0 && this.queued < this.maxQueuedRecords);
  }

  /** Moves waiting sends into batches while there is room, in call order. */
  private pump(): void {
    while (this.waiting.length > 0 && this.queued < this.maxQueuedRecords) {
      const next = this.waiting[0]!;
      let partition = next.partition;
      if (partition === undefined) {
        const topic = this.topics.get(next.topic);
        if (!(topic instanceof Topic)) {
          if (topic === undefined) this.loadTopic(next.topic);
          return; // the head waits for its partitions; order is kept behind it
        }
        partition = topic.partitionFor(next.key);
      }
      this.waiting.shift();
      this.admit(next, partition);
    }
    if (this.hasRoom()) for (const wake of this.roomWaiters.splice(0)) wake();
  }

  private loadTopic(name: string): void {
    const loading = this.connection.topic(name).then(
      (topic) => {
        this.topics.set(name, topic);
        this.pump();
      },
      (error: Error) => {
        this.topics.delete(name);
        // Only the records that needed this topic's partitions fail; the rest keep their turn.
        for (let i = this.waiting.length - 1; i >= 0; i--) {
          const w = this.waiting[i]!;
          if (w.topic === name && w.partition === undefined) {
            this.waiting.splice(i, 1);
            w.reject(error);
          }
        }
        this.checkFlushed();
        this.pump();
      },
    );
    this.topics.set(name, loading);
  }

  private admit(w: Waiting, partition: number): void {
    const key = `${w.topic}\u0000${partition}`;
    let batch = this.open.get(key);
    // A batch must fit one frame; a record that would overflow it starts the next batch.
    if (batch && batch.frameBytes + produceRecordBytes(w.payload) - lengthPrefixBytes > frameBytesMax) {
      this.seal(batch);
      batch = undefined;
    }
    if (!batch) {
      const fresh = new Batch(w.topic, partition);
      fresh.lingerTimer = this.clock.setTimeout(() => this.seal(fresh), this.lingerMs);
      this.open.set(key, fresh);
      batch = fresh;
    }
    const entry: BatchEntry = { payload: w.payload, seq: w.seq, resolve: w.resolve, reject: w.reject };
    batch.add(entry);
    this.queued++;
    if (batch.size >= this.maxBatchRecords || w.seq < this.flushMark) this.seal(batch);
  }

  private seal(batch: Batch): void {
    if (batch.state !== 'open') return;
    this.clock.clearTimeout(batch.lingerTimer);
    this.open.delete(`${batch.topic}\u0000${batch.partition}`);
    batch.seal();
    this.sealed.push(batch);
    this.dispatch();
  }

  /**
   * Sends sealed batches, oldest first, while request slots are free. A partition at its
   * maxInFlightPerPartition is skipped: its batches wait, in order, for the ones ahead to settle.
   */
  private dispatch(): void {
    for (let i = 0; i < this.sealed.length && this.inFlight < this.maxInFlight; ) {
      if (this.machine.is('failed')) return;
      const batch = this.sealed[i]!;
      const key = `${batch.topic}\u0000${batch.partition}`;
      const toPartition = this.inFlightTo.get(key) ?? 0;
      if (toPartition >= this.maxInFlightPerPartition) {
        i++;
        continue;
      }
      this.sealed.splice(i, 1);
      this.inFlightTo.set(key, toPartition + 1);
      batch.dispatch();
      this.inFlight++;
      this.connection.produce(batch.topic, batch.partition, batch.payloads, { ack: this.ack }).then(
        (result) =>
          this.finish(batch, () =>
            result === null ? batch.complete(OFFSET_UNKNOWN, false) : batch.complete(result.baseOffset, true),
          ),
        (error: Error) => this.finish(batch, () => batch.fail(error)),
      );
    }
  }

  private finish(batch: Batch, settle: () => void): void {
    this.inFlight--;
    const key = `${batch.topic}\u0000${batch.partition}`;
    const toPartition = (this.inFlightTo.get(key) ?? 1) - 1;
    if (toPartition === 0) this.inFlightTo.delete(key);
    else this.inFlightTo.set(key, toPartition);
    this.queued -= batch.size;
    settle();
    this.checkFlushed();
    this.pump();
    this.dispatch();
  }

  private checkFlushed(): void {
    if (this.flushWaiters.length === 0) return;
    const first = this.unsettled.values().next();
    const lowest = first.done ? Number.POSITIVE_INFINITY : first.value;
    const still: typeof this.flushWaiters = [];
    for (const w of this.flushWaiters) {
      if (w.mark <= lowest) w.resolve();
      else still.push(w);
    }
    this.flushWaiters = still;
  }

  /** The connection is gone: every record not yet in flight fails with the reason (in-flight ones fail on their own). */
  private onConnectionLost(reason: Error): void {
    if (this.machine.is('closed', 'failed')) return;
    this.failure = reason;
    this.machine.to('failed');
    for (const batch of this.open.values()) {
      this.clock.clearTimeout(batch.lingerTimer);
      this.queued -= batch.size;
      batch.fail(reason);
    }
    this.open.clear();
    for (const batch of this.sealed) {
      this.queued -= batch.size;
      batch.fail(reason);
    }
    this.sealed = [];
    for (const w of this.waiting.splice(0)) w.reject(reason);
    this.checkFlushed();
    for (const wake of this.roomWaiters.splice(0)) wake();
  }
}
