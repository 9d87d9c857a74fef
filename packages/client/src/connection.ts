/**
 * One TCP connection to a broker. Requests are pipelined: each is written at once and its answer is
 * matched by order, with the correlationId of every answer checked against the request at the head
 * of the queue. An answer out of step means the stream can no longer be trusted, so the request
 * fails loudly and the connection closes, failing everything else pending.
 *
 *   open ──close()──> draining ──(no answer pending)──> closed
 *     └──────────(failure: lost socket, protocol error, timeout)──────────┘
 */
import net from 'node:net';
import {
  AckPolicy,
  ALL_PARTITIONS,
  ApiKey,
  type ApiVersionRange,
  apiVersionsBeforeDiscovery,
  CorruptRecordError,
  decodeApiVersionsResponse,
  decodeApplyResponse,
  decodeListFragmentsResponse,
  decodeListResponse,
  decodeMetadataResponse,
  decodeMetadataResponseV2,
  decodeMetadataResponseV4,
  decodeMetadataResponseV5,
  decodeMoveResponse,
  decodeProduceResponse,
  ErrorCode,
  encodeApiVersionsRequest,
  encodeApplyRequest,
  encodeApplyRequestV2,
  encodeFetchRequestV2,
  encodeFetchRequestV3,
  encodeFetchRequestV4,
  encodeFetchRequestV5,
  encodeListFragmentsRequest,
  encodeListRequest,
  encodeMetadataRequest,
  encodeMetadataRequestV2,
  encodeMetadataRequestV3,
  encodeMetadataRequestV4,
  encodeMetadataRequestV5,
  encodeMoveRequest,
  encodeProduceRequest,
  encodeProduceRequestV2,
  encodeProduceRequestV3,
  FrameReader,
  type FrameSink,
  fetchWaitMsMax,
  frameBytesMax,
  type InFlight,
  lengthPrefixBytes,
  listWaitMsMax,
  type MetadataResponseV2,
  type MetadataResponseV4,
  type MetadataResponseV5,
  MoveFlag,
  NO_EPOCH,
  NO_WATCH,
  type PartitionFragments,
  Pipeline,
  type ProduceResult,
  ProtocolError,
  readResponseFrame,
  responseFrameLimits,
  speaks,
  type TopicMetadata,
} from '@booblik/protocol';
import { formatAddress, parseAddress } from './address.js';
import { checkCount, checkInt32, checkOffset } from './checks.js';
import { type Clock, systemClock } from './clock.js';
import { Consumer, type ConsumerOptions } from './consumer.js';
import {
  AbortError,
  BrokerError,
  ConnectError,
  ConnectionClosedError,
  InvalidArgumentError,
  type RequestSubject,
  RequestTooLargeError,
  TimeoutError,
  unknownEffect,
  WrongPortError,
} from './errors.js';
import { decodeFetchAnswer, type FetchResult } from './fetch-result.js';
import {
  CLOSE_WAIT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  HTTP_AS_FRAME_LENGTH,
} from './limits.js';
import type { ConnectOptions, FetchOptions, ProduceOptions, RequestOptions } from './request-options.js';
import { StateMachine } from './state-machine.js';
import { Topic, type TopicOptions } from './topic.js';
import { refusalOf } from './topic-errors.js';
import {
  type ApplyOptions,
  type ApplyResult,
  type TopicChangeInput,
  type TopicListing,
  toWireChange,
  type WatchOptions,
} from './topics.js';

/** A watch's held LIST asks again after this long without a change (the broker caps it at 60 s). */
const DEFAULT_WATCH_WAIT_MS = 30_000;

export type { FetchedRecord, FetchResult } from './fetch-result.js';

export type { ConnectOptions, FetchOptions, ProduceOptions, RequestOptions } from './request-options.js';

/** open ──close()──> draining ──> closed, or closed at once on a failure. */
export type ConnectionState = 'open' | 'draining' | 'closed';

interface Pending extends InFlight {
  /** What is asked, for errors: `FETCH orders/0 at 12`. */
  what: string;
  /** The topics and partition asked about, named again in a refusal. */
  subject: RequestSubject;
  decode(body: Buffer): unknown;
  /** The error for a refusal (its body carries details for some codes). */
  refusal(code: number, body: Buffer): Error;
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** How long it had before failing with TimeoutError (its deadline is on the connection's clock). */
  timeoutMs: number;
  detachSignal: (() => void) | undefined;
  /** For a request that changes something: what losing its answer leaves unknown. */
  unknownEffect: string | undefined;
}

export class Connection {
  /** `host:port` as connected to; a consumer dials it again after a loss. */
  readonly address: string;
  /** Resolves when the connection is closed: with the failure that closed it, or undefined after close(). */
  readonly closed: Promise<Error | undefined>;

  private readonly machine = new StateMachine<ConnectionState>('connection', 'open', {
    open: ['draining', 'closed'],
    draining: ['closed'],
    closed: [],
  });
  /** Requests in flight, in the order written, with the one timer for their deadlines. */
  private readonly pending: Pipeline<Pending>;
  private readonly sink: FrameSink;
  private readonly clock: Clock;
  private readonly requestTimeoutMs: number;
  /** Whether any answer arrived: an HTTP reply can only be the very first bytes. */
  private answered = false;
  private closeReason: Error | undefined;
  /** Whether the broker has FETCH v5, once asked (see speaksFetchEpochs). */
  private fetchEpochs: Promise<boolean> | undefined;
  private markClosed!: (reason: Error | undefined) => void;

  /** Opens a connection to `host:port` (a bare host means port 9092). */
  static async connect(address: string, options: ConnectOptions = {}): Promise<Connection> {
    const target = parseAddress(address);
    const name = formatAddress(target);
    const clock = options.clock ?? systemClock;
    const timeoutMs = checkCount('timeoutMs', options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 1);
    const signal = options.signal;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(new AbortError(`connect to ${name}`, { cause: signal.reason }));
        return;
      }
      // Answers are read into buffers the reader owns, a large one straight into a buffer of its size.
      const frames = new FrameReader(responseFrameLimits);
      let connection: Connection | undefined;
      const socket = net.connect({
        host: target.host,
        port: target.port,
        noDelay: true,
        onread: {
          buffer: () => frames.readTarget(),
          // Reading starts after 'connect', whose handler makes the connection: it is there for every read.
          callback: (bytes: number) => {
            connection!.onRead(bytes);
            return true; // keep reading: answers are handled as they come, never held back
          },
        },
      });
      const finish = (error?: Error) => {
        clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', onError);
        socket.off('connect', onConnect);
        if (error) {
          socket.destroy();
          reject(error);
        } else {
          connection = new Connection(socket, frames, name, options);
          resolve(connection);
        }
      };
      const onConnect = () => finish();
      const onError = (error: Error) => finish(new ConnectError(name, error.message, { cause: error }));
      const onAbort = () => finish(new AbortError(`connect to ${name}`, { cause: signal?.reason }));
      const timer = clock.setTimeout(() => {
        const timeout = new TimeoutError(`connect to ${name}`, timeoutMs);
        finish(new ConnectError(name, timeout.message, { cause: timeout }));
      }, timeoutMs);
      socket.once('connect', onConnect);
      socket.once('error', onError);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private constructor(
    private readonly socket: net.Socket,
    private readonly frames: FrameReader,
    address: string,
    /** Kept so that whoever dials again (a consumer) uses the same settings. */
    readonly options: ConnectOptions,
  ) {
    this.address = address;
    this.clock = options.clock ?? systemClock;
    this.pending = new Pipeline<Pending>(this.clock, (entry) => this.onTimeout(entry));
    this.requestTimeoutMs = checkCount(
      'requestTimeoutMs',
      options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      1,
    );
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    this.sink = {
      frame: (frame: Buffer) => this.onFrame(frame),
      // Response limits make every frame at least a header long, so this cannot happen; if it did,
      // the stream would be out of step all the same.
      shortFrame: (length: number) => this.fail(new ProtocolError(`response frame of ${length} bytes`)),
      invalidLength: (length: number) =>
        this.fail(
          !this.answered && length === HTTP_AS_FRAME_LENGTH
            ? new WrongPortError(this.address)
            : new ProtocolError(
                `response frame length ${length}, expected ${responseFrameLimits.frameBytesMin}..${frameBytesMax}`,
              ),
        ),
    };
    socket.on('error', (error) => {
      this.closeReason ??= error;
    });
    socket.on('close', () => {
      if (this.machine.is('closed')) return;
      const cause = this.closeReason;
      this.fail(
        new ConnectionClosedError(
          this.address,
          cause
            ? `connection to ${this.address} lost: ${cause.message}`
            : `connection to ${this.address} closed by the broker`,
          { cause },
        ),
      );
    });
  }

  get state(): ConnectionState {
    return this.machine.state;
  }

  /** Requests sent and not yet answered (abandoned ones included: their answers are still due). */
  get pendingRequests(): number {
    return this.pending.size;
  }

  /** Partitions and offsets of the named topics, or of every topic when none is named. */
  metadata(...topics: string[]): Promise<TopicMetadata[]> {
    const what = topics.length === 0 ? 'METADATA' : `METADATA ${topics.join(',')}`;
    return this.request(
      what,
      { topics },
      (id) => encodeMetadataRequest(id, { topics }),
      (body) => decodeMetadataResponse(body),
      this.requestTimeoutMs,
    );
  }

  /**
   * Appends records to one partition. Resolves with the base offset and the log's end, or with null
   * under ack NONE: then nothing is awaited but the socket write, and no answer is ever read (the
   * broker sends none, not even a refusal).
   */
  produce(
    topic: string,
    partition: number,
    records: readonly Uint8Array[],
    options: ProduceOptions = {},
  ): Promise<ProduceResult | null> {
    const ack = options.ack ?? AckPolicy.WRITTEN;
    const what = `PRODUCE ${topic}/${partition}`;
    try {
      checkInt32('partition', partition, 0);
      if (ack !== AckPolicy.NONE && ack !== AckPolicy.WRITTEN && ack !== AckPolicy.FORCED) {
        throw new InvalidArgumentError(`ack: ${ack}, expected AckPolicy.NONE, WRITTEN or FORCED`);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    const expectedOffset = options.expectedOffset;
    if (expectedOffset !== undefined) {
      try {
        checkOffset('expectedOffset', expectedOffset);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const build = (id: number) =>
      options.followRoutes
        ? encodeProduceRequestV3(id, { topic, partition, ack, records, expectedOffset })
        : expectedOffset === undefined
          ? encodeProduceRequest(id, { topic, partition, ack, records })
          : encodeProduceRequestV2(id, { topic, partition, ack, records, expectedOffset });
    if (ack === AckPolicy.NONE) return this.sendUnanswered(what, build).then(() => null);
    return this.request(
      what,
      { topics: [topic], partition },
      build,
      (body) => decodeProduceResponse(body),
      this.requestTimeoutMs,
      undefined,
      (code, body) => refusalOf(code, what, body, { topics: [topic], partition }, expectedOffset),
      unknownEffect.records,
    );
  }

  /**
   * Creates, changes and deletes topics: every change or none (APPLY). A change whose expected
   * revision is stale fails with RevisionMismatchError, a value the broker refuses with
   * InvalidArgumentRefusal; a bad field is refused here before anything is sent.
   */
  async applyTopics(changes: readonly TopicChangeInput[], options: ApplyOptions = {}): Promise<ApplyResult> {
    const wire = changes.map(toWireChange);
    const what = `APPLY of ${changes.length} change(s)`;
    // v2 only when a purge is asked for: every other APPLY keeps v1's bytes, for every broker.
    const encode = wire.some((c) => c.op === 'delete' && c.purgeStore === true)
      ? encodeApplyRequestV2
      : encodeApplyRequest;
    return this.request(
      what,
      {},
      (id) => encode(id, { dryRun: options.dryRun ?? false, changes: wire }),
      (body) => decodeApplyResponse(body),
      this.requestTimeoutMs,
      undefined,
      undefined,
      unknownEffect.changes,
    );
  }

  /**
   * Gives a partition of a cluster to another member (MOVE). A replicated partition is copied to it
   * first, then it becomes the primary; with `away`, `member` is the broker the partition leaves (a
   * drain). A partition with one copy that has records moves only with `abandonRecords`. Resolves
   * with the revision at which the broker routes it anew.
   */
  movePartition(
    topic: string,
    partition: number,
    member: string,
    options: { abandonRecords?: boolean; away?: boolean; unclean?: boolean; timeoutMs?: number } = {},
  ): Promise<{ revision: number }> {
    return this.request(
      `MOVE ${topic}/${partition} ${options.away === true ? 'away from' : 'to'} ${member}`,
      {},
      (id) =>
        encodeMoveRequest(id, {
          topic,
          partition,
          member,
          flags:
            (options.abandonRecords === true ? MoveFlag.ABANDON_RECORDS : 0) |
            (options.away === true ? MoveFlag.AWAY : 0) |
            (options.unclean === true ? MoveFlag.UNCLEAN : 0),
        }),
      (body) => decodeMoveResponse(body),
      options.timeoutMs ?? this.requestTimeoutMs,
      undefined,
      undefined,
      unknownEffect.changes,
    );
  }

  /** The topics a label selector matches (`team=payments,env in (prod,dev)`; "" for all), with specs and routes. */
  listTopics(selector = '', options: RequestOptions = {}): Promise<TopicListing> {
    return this.listRequest(selector, NO_WATCH, 0, options.signal);
  }

  private listRequest(selector: string, watchRevision: number, maxWaitMs: number, signal?: AbortSignal) {
    const what = selector === '' ? 'LIST' : `LIST ${selector}`;
    return this.request(
      what,
      {},
      (id) => encodeListRequest(id, { selector, watchRevision, maxWaitMs }),
      (body): TopicListing => decodeListResponse(body),
      this.requestTimeoutMs + Math.min(maxWaitMs, listWaitMsMax),
      signal,
    );
  }

  /**
   * Follows the topics a selector matches: yields the current listing, then a new one each time the
   * spec store changes, until `signal` aborts (the iterator then ends without an error). It holds a
   * LIST on a connection of its own, so requests on this one are not queued behind it.
   */
  async *watchTopics(selector = '', options: WatchOptions = {}): AsyncGenerator<TopicListing> {
    const { signal } = options;
    const maxWaitMs = checkInt32('maxWaitMs', options.maxWaitMs ?? DEFAULT_WATCH_WAIT_MS, 1);
    if (signal?.aborted) return;
    const own = await this.redial();
    const closeOwn = () => own.destroy(new AbortError('watch'));
    signal?.addEventListener('abort', closeOwn, { once: true });
    try {
      let listing = await own.listRequest(selector, NO_WATCH, 0, signal);
      yield listing;
      for (;;) {
        const next = await own.listRequest(selector, listing.revision, maxWaitMs, signal);
        if (next.revision <= listing.revision) continue; // the wait ended: nothing changed
        listing = next;
        yield listing;
      }
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    } finally {
      signal?.removeEventListener('abort', closeOwn);
      own.destroy();
    }
  }

  /**
   * LIST_FRAGMENTS: each segment of a partition (of every partition when `partition` is omitted),
   * oldest first, with its offsets, bytes, where it lives (local disk, store, both) and when it was
   * persisted. An unknown topic or partition fails with the broker's UNKNOWN_TOPIC_OR_PARTITION.
   */
  listFragments(
    topic: string,
    partition?: number,
    options: RequestOptions = {},
  ): Promise<PartitionFragments[]> {
    if (partition !== undefined) checkInt32('partition', partition, 0);
    return this.request(
      partition === undefined ? `LIST_FRAGMENTS ${topic}` : `LIST_FRAGMENTS ${topic}/${partition}`,
      partition === undefined ? { topics: [topic] } : { topics: [topic], partition },
      (id) => encodeListFragmentsRequest(id, { topic, partition: partition ?? ALL_PARTITIONS }),
      (body) => decodeListFragmentsResponse(body),
      this.requestTimeoutMs,
      options.signal,
    );
  }

  /** The API keys and versions the broker serves; a broker that predates API_VERSIONS gets the v1 set. */
  async apiVersions(): Promise<readonly ApiVersionRange[]> {
    try {
      return await this.request(
        'API_VERSIONS',
        {},
        (id) => encodeApiVersionsRequest(id),
        (body) => decodeApiVersionsResponse(body),
        this.requestTimeoutMs,
      );
    } catch (error) {
      if (error instanceof BrokerError && error.code === ErrorCode.UNSUPPORTED_VERSION)
        return apiVersionsBeforeDiscovery;
      throw error;
    }
  }

  /** METADATA v2: partitions and offsets as metadata() has them, plus the spec store revision and each route. */
  metadataWithRoutes(...topics: string[]): Promise<MetadataResponseV2> {
    return this.request(
      topics.length === 0 ? 'METADATA' : `METADATA ${topics.join(',')}`,
      { topics },
      (id) => encodeMetadataRequestV2(id, { topics }),
      (body) => decodeMetadataResponseV2(body),
      this.requestTimeoutMs,
    );
  }

  /**
   * METADATA v3 (the broker must have it): as metadataWithRoutes(), answered once the broker's copy
   * of the topic specs has reached `minRevision` (the revision an APPLY returned; 0: at once).
   */
  metadataAtRevision(topics: readonly string[], minRevision: number): Promise<MetadataResponseV2> {
    return this.request(
      topics.length === 0 ? 'METADATA' : `METADATA ${topics.join(',')}`,
      { topics },
      (id) => encodeMetadataRequestV3(id, { topics: [...topics], minRevision, flags: 0 }),
      (body) => decodeMetadataResponseV2(body),
      this.requestTimeoutMs,
    );
  }

  /**
   * METADATA v4 (the broker must have it): every partition's RouteV2 (epoch, every replica with its
   * zone, whether it is in sync, its lag), answered once the broker's specs reach `minRevision`.
   */
  metadataWithReplicas(topics: readonly string[], minRevision = 0): Promise<MetadataResponseV4> {
    return this.request(
      topics.length === 0 ? 'METADATA' : `METADATA ${topics.join(',')}`,
      { topics: [...topics] },
      (id) => encodeMetadataRequestV4(id, { topics: [...topics], minRevision, flags: 0 }),
      (body) => decodeMetadataResponseV4(body),
      this.requestTimeoutMs,
    );
  }

  /**
   * METADATA v5 (the broker must have it): metadataWithReplicas() with, per partition, where its
   * offsets come from: its primary (PRIMARY), a copy of it on the answering broker while the
   * primary does not answer (COPY: a range it has, all committed), or nowhere (UNKNOWN: the 0 and 0
   * mean nothing).
   */
  metadataWithOffsets(topics: readonly string[], minRevision = 0): Promise<MetadataResponseV5> {
    return this.request(
      topics.length === 0 ? 'METADATA' : `METADATA ${topics.join(',')}`,
      { topics: [...topics] },
      (id) => encodeMetadataRequestV5(id, { topics: [...topics], minRevision, flags: 0 }),
      (body) => decodeMetadataResponseV5(body),
      this.requestTimeoutMs,
    );
  }

  /**
   * One FETCH (version 2, 3 with followRoutes, 4 with fromReplica, 5 with lastEpoch): whole records
   * with their offsets, the high watermark, and what was cut.
   */
  fetch(request: FetchOptions, options: RequestOptions = {}): Promise<FetchResult> {
    const { topic, partition, offset, maxBytes, lastEpoch } = request;
    const maxWaitMs = request.maxWaitMs ?? 0;
    const minBytes = request.minBytes ?? 0;
    try {
      checkInt32('partition', partition, 0);
      checkOffset('offset', offset);
      checkInt32('maxBytes', maxBytes, 1);
      checkInt32('maxWaitMs', maxWaitMs, 0);
      checkInt32('minBytes', minBytes, 0);
      if (lastEpoch !== undefined) checkInt32('lastEpoch', lastEpoch, NO_EPOCH);
    } catch (error) {
      return Promise.reject(error);
    }
    const fields = { topic, partition, fetchOffset: offset, maxBytes, maxWaitMs, minBytes };
    const what = `FETCH ${topic}/${partition} at ${offset}`;
    // The broker may hold the request for its wait (capped at fetchWaitMsMax) before answering.
    const timeoutMs = this.requestTimeoutMs + Math.min(maxWaitMs, fetchWaitMsMax);
    const subject = { topics: [topic], partition };
    return this.request(
      what,
      subject,
      (id) =>
        lastEpoch !== undefined
          ? encodeFetchRequestV5(id, { ...fields, lastEpoch })
          : (request.fromReplica
              ? encodeFetchRequestV4
              : request.followRoutes
                ? encodeFetchRequestV3
                : encodeFetchRequestV2)(id, fields),
      (body): FetchResult => decodeFetchAnswer(body, offset, maxBytes, lastEpoch !== undefined),
      timeoutMs,
      options.signal,
      (code, body) => refusalOf(code, what, body, subject, offset),
    );
  }

  /**
   * Whether the broker has FETCH v5, so a consumer can send the epoch it read last: asked with
   * API_VERSIONS once per connection (a failure is asked again next time).
   */
  speaksFetchEpochs(): Promise<boolean> {
    this.fetchEpochs ??= this.apiVersions().then(
      (versions) => speaks(versions, ApiKey.FETCH, 'carriesEpochs'),
      (error: unknown) => {
        this.fetchEpochs = undefined;
        throw error;
      },
    );
    return this.fetchEpochs;
  }

  /** Opens a new connection to the same address with the same settings (this one is left as it is). */
  redial(): Promise<Connection> {
    const { signal: _once, ...settings } = this.options;
    return Connection.connect(this.address, settings);
  }

  /** A topic handle: its partitions (read now with METADATA), the partitioner, and send(). */
  topic(name: string, options: TopicOptions = {}): Promise<Topic> {
    return Topic.load(this, name, options);
  }

  /** A consumer of one partition starting at `offset`, fetching on this connection (see Consumer). */
  consumer(topic: string, partition: number, offset: number, options: ConsumerOptions = {}): Consumer {
    return new Consumer(this, topic, partition, offset, options);
  }

  /**
   * Stops taking requests, waits for the answers still due (each bounded by its timeout; abandoned
   * ones are not waited for), then ends the socket so that everything written (ack NONE included)
   * reaches the broker.
   */
  async close(): Promise<void> {
    if (this.machine.is('open')) {
      this.machine.to('draining');
      this.finishDrain();
    }
    await this.closed;
  }

  /** Cuts the connection now, failing everything pending with ConnectionClosedError. */
  destroy(reason?: Error): void {
    this.fail(reason ?? new ConnectionClosedError(this.address, `connection to ${this.address} destroyed`));
  }

  private request<T>(
    what: string,
    subject: RequestSubject,
    build: (correlationId: number) => Buffer,
    decode: (body: Buffer) => T,
    timeoutMs: number,
    signal?: AbortSignal,
    toRefusal?: (code: number, body: Buffer) => Error,
    unknownEffect?: string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const refusal = this.refuseNew(what, signal);
      if (refusal) {
        reject(refusal);
        return;
      }
      const correlationId = this.pending.takeCorrelationId();
      const frame = build(correlationId);
      if (frame.length - lengthPrefixBytes > frameBytesMax) {
        reject(new RequestTooLargeError(what, frame.length - lengthPrefixBytes, frameBytesMax));
        return;
      }
      const entry: Pending = {
        correlationId,
        what,
        subject,
        decode,
        refusal: toRefusal ?? ((code, body) => refusalOf(code, what, body, subject)),
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: this.clock.now() + timeoutMs,
        timeoutMs,
        abandoned: false,
        detachSignal: undefined,
        unknownEffect,
      };
      if (signal) {
        const onAbort = () => {
          if (entry.abandoned) return;
          entry.abandoned = true;
          reject(new AbortError(what, { cause: signal.reason }));
          this.finishDrain(); // a close() waiting only for this answer need not wait any more
        };
        signal.addEventListener('abort', onAbort, { once: true });
        entry.detachSignal = () => signal.removeEventListener('abort', onAbort);
      }
      this.pending.add(entry);
      this.socket.write(frame);
    });
  }

  /** Writes a request the broker never answers (PRODUCE with ack NONE): no slot in the answer queue. */
  private sendUnanswered(what: string, build: (correlationId: number) => Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const refusal = this.refuseNew(what);
      if (refusal) {
        reject(refusal);
        return;
      }
      const frame = build(this.pending.takeCorrelationId());
      if (frame.length - lengthPrefixBytes > frameBytesMax) {
        reject(new RequestTooLargeError(what, frame.length - lengthPrefixBytes, frameBytesMax));
        return;
      }
      // Resolving once the bytes are handed to the kernel gives NONE natural backpressure.
      this.socket.write(frame, (error) => {
        if (error) {
          reject(
            new ConnectionClosedError(this.address, `${what}: not sent, connection to ${this.address} lost`, {
              cause: error,
            }),
          );
        } else {
          resolve();
        }
      });
    });
  }

  private refuseNew(what: string, signal?: AbortSignal): Error | undefined {
    if (signal?.aborted) return new AbortError(what, { cause: signal.reason });
    if (this.machine.is('open')) return undefined;
    return new ConnectionClosedError(this.address, `${what}: connection to ${this.address} is closed`, {
      cause: this.closeReason,
    });
  }

  /** The socket read `bytes` into the reader's last target. */
  private onRead(bytes: number): void {
    this.frames.written(bytes, this.sink);
  }

  private onFrame(frame: Buffer): void {
    if (this.machine.is('closed')) return;
    this.answered = true;
    // The broker answers a connection in request order: the answer is the oldest request's.
    const head = this.pending.takeOldest();
    if (!head) {
      this.fail(new ProtocolError('an answer arrived with no request waiting for it'));
      return;
    }
    head.detachSignal?.();
    const response = readResponseFrame(frame);
    if (response.correlationId !== head.correlationId) {
      const error = new ProtocolError(
        `${head.what}: the answer carries correlationId ${response.correlationId}, expected ` +
          `${head.correlationId}; answers are out of step, so the connection is closed`,
      );
      if (!head.abandoned) head.reject(error);
      this.fail(error);
      return;
    }
    if (response.errorCode !== 0) {
      let refusal: Error;
      try {
        refusal = head.refusal(response.errorCode, response.body);
      } catch (error) {
        if (!head.abandoned) head.reject(error as Error);
        this.fail(error as Error);
        return;
      }
      if (!head.abandoned) head.reject(refusal);
    } else {
      let value: unknown;
      try {
        value = head.decode(response.body);
      } catch (error) {
        // A corrupt record is a fact about stored bytes, not about the stream: the connection is fine.
        if (error instanceof CorruptRecordError) {
          if (!head.abandoned) head.reject(error);
          this.finishDrain();
          return;
        }
        const wrapped =
          error instanceof ProtocolError
            ? error
            : new ProtocolError(`${head.what}: the answer does not decode`, { cause: error });
        if (!head.abandoned) head.reject(wrapped);
        this.fail(wrapped);
        return;
      }
      if (!head.abandoned) head.resolve(value);
    }
    this.finishDrain();
  }

  /**
   * No answer in time means the broker or the path to it is stuck; as answers come in order, every
   * later request is stuck behind this one. So the request fails and the connection closes. (The
   * pipeline skips abandoned requests: this one is still awaited.)
   */
  private onTimeout(entry: Pending): void {
    const error = new TimeoutError(entry.what, entry.timeoutMs, entry.unknownEffect);
    entry.detachSignal?.();
    entry.reject(error);
    this.fail(error);
  }

  /** While draining, ends the socket once the last answer anyone still waits for is in. */
  private finishDrain(): void {
    if (!this.machine.is('draining') || this.pending.anyWaiting) return;
    this.machine.to('closed');
    // Only abandoned requests are left: their answers are not read any more.
    this.pending.close((entry) => entry.detachSignal?.());
    const cut = this.clock.setTimeout(() => this.socket.destroy(), CLOSE_WAIT_MS);
    this.socket.once('close', () => {
      this.clock.clearTimeout(cut);
      this.markClosed(undefined);
    });
    this.socket.end();
  }

  /** Closes at once: every pending request fails with ConnectionClosedError carrying `reason`. */
  private fail(reason: Error): void {
    if (this.machine.is('closed')) return;
    this.machine.to('closed');
    this.closeReason = reason;
    this.socket.destroy();
    const failed =
      reason instanceof ConnectionClosedError
        ? reason
        : new ConnectionClosedError(this.address, `connection to ${this.address} closed: ${reason.message}`, {
            cause: reason,
          });
    this.pending.close((entry) => {
      entry.detachSignal?.();
      if (entry.abandoned) return;
      // Sent, answer lost: a PRODUCE or APPLY may have taken effect, and its error says so (an HTTP
      // server took nothing).
      entry.reject(
        entry.unknownEffect === undefined || reason instanceof WrongPortError
          ? failed
          : new ConnectionClosedError(
              this.address,
              `${entry.what}: connection to ${this.address} lost before the answer: ${entry.unknownEffect}`,
              { cause: failed, outcomeUnknown: true },
            ),
      );
    });
    this.markClosed(failed);
  }
}
