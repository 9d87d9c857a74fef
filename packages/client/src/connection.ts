/**
 * One TCP connection to a broker (see RequestChannel for how requests are pipelined): a method per
 * kind of request, and the topic handles and consumers that send through it.
 */
import type net from 'node:net';
import {
  AckPolicy,
  ALL_PARTITIONS,
  ApiKey,
  type ApiVersionRange,
  apiVersionsBeforeDiscovery,
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
  decodeUsersResponse,
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
  encodeUsersRequest,
  type FrameReader,
  fetchWaitMsMax,
  listWaitMsMax,
  type MetadataResponseV2,
  type MetadataResponseV4,
  type MetadataResponseV5,
  MoveFlag,
  NO_EPOCH,
  NO_WATCH,
  type PartitionFragments,
  type ProduceResult,
  speaks,
  type TopicMetadata,
} from '@booblik/protocol';
import { checkAuthOptions, concealSecrets } from './auth.js';
import { AuthenticatedChannel } from './authenticated-channel.js';
import { checkInt32, checkOffset } from './checks.js';
import { Consumer, type ConsumerOptions } from './consumer.js';
import { dial } from './dial.js';
import { AbortError, BrokerError, InvalidArgumentError, unknownEffect } from './errors.js';
import { decodeFetchAnswer, type FetchResult } from './fetch-result.js';
import type { ConnectOptions, FetchOptions, ProduceOptions, RequestOptions } from './request-options.js';
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
import { type UpsertUserOptions, type UserListing, usersRequest } from './users.js';

/** A watch's held LIST asks again after this long without a change (the broker caps it at 60 s). */
const DEFAULT_WATCH_WAIT_MS = 30_000;

export type { FetchedRecord, FetchResult } from './fetch-result.js';
export type { ConnectionState } from './request-channel.js';
export type { ConnectOptions, FetchOptions, ProduceOptions, RequestOptions } from './request-options.js';

export class Connection extends AuthenticatedChannel {
  /** Whether the broker has FETCH v5, once asked (see speaksFetchEpochs). */
  private fetchEpochs: Promise<boolean> | undefined;

  /**
   * Opens a connection to `host:port` (a bare host means port 9092). With `auth`, it authenticates
   * before it is handed out: a refusal (AuthenticationFailedError) or a broker that cannot prove
   * itself (BrokerUnverifiedError) fails the connect.
   */
  static async connect(address: string, given: ConnectOptions = {}): Promise<Connection> {
    if (given.auth !== undefined) checkAuthOptions(given.auth);
    const options = concealSecrets(given);
    const auth = options.auth;
    const connection = await dial(
      address,
      options,
      (socket, frames, name) => new Connection(socket, frames, name, options),
    );
    if (auth === undefined) return connection;
    try {
      await connection.authenticate(auth, options.signal);
    } catch (error) {
      connection.destroy();
      throw error;
    }
    return connection;
  }

  private constructor(socket: net.Socket, frames: FrameReader, address: string, options: ConnectOptions) {
    super(socket, frames, address, options);
  }

  /** The SCRAM users the broker knows (USERS LIST), by name. */
  listUsers(): Promise<UserListing[]> {
    return this.usersRequest('list');
  }

  /**
   * Adds the user, or replaces its password (USERS UPSERT); resolves with the users after it. The
   * password is salted and hashed here and never sent.
   */
  upsertUser(name: string, password: string, options: UpsertUserOptions = {}): Promise<UserListing[]> {
    return this.usersRequest('upsert', name, password, options);
  }

  /** Removes the user (USERS REMOVE; one the broker does not know is refused); resolves with the users left. */
  removeUser(name: string): Promise<UserListing[]> {
    return this.usersRequest('remove', name);
  }

  private usersRequest(...args: Parameters<typeof usersRequest>): Promise<UserListing[]> {
    let built: ReturnType<typeof usersRequest>;
    try {
      built = usersRequest(...args);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.request(
      built.what,
      {},
      (id) => encodeUsersRequest(id, built.request),
      (body) => decodeUsersResponse(body),
      this.requestTimeoutMs,
      undefined,
      undefined,
      args[0] === 'list' ? undefined : unknownEffect.changes,
    );
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
    if (ack === AckPolicy.NONE) {
      const send = () => this.sendUnanswered(what, build).then(() => null);
      return this.refreshIfExpiring()?.then(send) ?? send();
    }
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
}
