/**
 * A client of a whole cluster: it bootstraps from one or more addresses, keeps one connection per
 * broker, and sends each partition's PRODUCE and FETCH to that partition's primary, as METADATA's
 * routes say. A route is refreshed when a broker answers NOT_PRIMARY (its answer carries the new
 * route, used at once), NO_PRIMARY (pause, then METADATA again) or when the primary's connection
 * fails (METADATA again from another broker). Against one broker every route is that broker, so it
 * behaves as a Connection does. With `preferZone`, fetches go to an in-sync replica in that zone
 * when there is one (FETCH v4), and the high watermarks it shows never go back.
 *
 * Retries are bounded by `routeAttemptsMax`. A PRODUCE refused NOT_PRIMARY, NO_PRIMARY or
 * NOT_ENOUGH_REPLICAS was not written, so sending it again is safe; one whose connection failed may
 * have been written, and sending it again can store it twice: at least once, as with any resend
 * after a lost answer (giving up after such a loss reports OutcomeUnknownError). OUTCOME_UNKNOWN is
 * never sent again.
 */

import {
  ApiKey,
  type ApiVersionRange,
  type Capability,
  ErrorCode,
  inSyncRouteOf,
  type MetadataResponseV2,
  type MetadataResponseV4,
  type MetadataResponseV5,
  type ProduceResult,
  type RouteV2,
  type TopicMetadata,
} from '@booblik/protocol';
import { checkAuthOptions, concealSecrets } from './auth.js';
import { BrokerPool, type PooledBroker } from './broker-pool.js';
import { checkCount } from './checks.js';
import { type Clock, systemClock } from './clock.js';
import type {
  ConnectOptions,
  FetchOptions,
  FetchResult,
  ProduceOptions,
  RequestOptions,
} from './connection.js';
import { Consumer, type ConsumerOptions } from './consumer.js';
import {
  BrokerError,
  ConnectError,
  InvalidArgumentError,
  isConnectionLoss,
  type RequestSubject,
} from './errors.js';
import {
  DEFAULT_ROUTE_ATTEMPTS_MAX,
  DEFAULT_ROUTE_RETRY_DELAY_MS,
  DEFAULT_ROUTE_RETRY_DELAY_MS_MAX,
} from './limits.js';
import { HighWatermarkFloor, readerInZone } from './replica-reads.js';
import { type Attempt, type RetryPolicy, withRetries } from './retries.js';
import { Topic, type TopicOptions } from './topic.js';
import { NotPrimaryError } from './topic-errors.js';
import type { ApplyOptions, ApplyResult, TopicChangeInput, TopicListing, WatchOptions } from './topics.js';

export interface ClientOptions extends ConnectOptions {
  /** Sends of one request across route changes and failures before its error is the caller's (default 8). */
  routeAttemptsMax?: number;
  /** First pause after NO_PRIMARY or a lost connection (default 100 ms), doubled per failure. */
  routeRetryDelayMs?: number;
  /** Longest such pause (default 2000 ms). */
  routeRetryDelayMsMax?: number;
  /**
   * Read from an in-sync replica in this zone when there is one (FETCH v4), else from the primary;
   * off by default. High watermarks shown never go back, across replicas and failovers.
   */
  preferZone?: string;
}

type ClientState = 'open' | 'closed';

export class Client {
  /** Resolves with undefined once close() is done (a lost broker connection does not close a Client). */
  readonly closed: Promise<Error | undefined>;
  private readonly pool: BrokerPool;
  /** `topic\0partition` -> its primary's address ('' while it has none). */
  private readonly routes = new Map<string, string>();
  /** With preferZone: each partition's RouteV2 (null: the broker that answered has no METADATA v4). */
  private readonly replicaRoutes = new Map<string, RouteV2 | null>();
  private readonly highWatermarks = new HighWatermarkFloor();
  private readonly preferZone: string | undefined;
  /** The highest revision an APPLY through this client returned: METADATA must have reached it. */
  private minRevision = 0;
  private machineState: ClientState = 'open';
  private markClosed!: (reason: Error | undefined) => void;
  private readonly retryPolicy: RetryPolicy;
  private readonly clock: Clock;

  private constructor(
    bootstrap: readonly string[],
    readonly options: ClientOptions,
  ) {
    this.pool = new BrokerPool(bootstrap, options);
    this.clock = options.clock ?? systemClock;
    this.retryPolicy = {
      attemptsMax: checkCount('routeAttemptsMax', options.routeAttemptsMax ?? DEFAULT_ROUTE_ATTEMPTS_MAX, 1),
      retryDelayMs: checkCount(
        'routeRetryDelayMs',
        options.routeRetryDelayMs ?? DEFAULT_ROUTE_RETRY_DELAY_MS,
      ),
      retryDelayMsMax: checkCount(
        'routeRetryDelayMsMax',
        options.routeRetryDelayMsMax ?? DEFAULT_ROUTE_RETRY_DELAY_MS_MAX,
      ),
      clock: this.clock,
      isClosed: () => this.machineState === 'closed',
      drop: (address) => this.pool.drop(address),
    };
    if (
      options.preferZone !== undefined &&
      (typeof options.preferZone !== 'string' || options.preferZone === '')
    ) {
      throw new InvalidArgumentError(
        `preferZone: ${JSON.stringify(options.preferZone)}, expected a zone name`,
      );
    }
    this.preferZone = options.preferZone;
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
  }

  /**
   * Connects to the first reachable of `bootstrap` (one `host:port` or a list) and returns a client
   * that follows routes. Fails with the last ConnectError when none answers.
   */
  static async connect(bootstrap: string | readonly string[], options: ClientOptions = {}): Promise<Client> {
    const list = typeof bootstrap === 'string' ? [bootstrap] : [...bootstrap];
    if (list.length === 0) throw new InvalidArgumentError('bootstrap: [], expected at least one host:port');
    if (options.auth !== undefined) checkAuthOptions(options.auth);
    const client = new Client(list.map(BrokerPool.normalise), concealSecrets(options));
    try {
      await client.anyBroker();
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  get state(): ClientState {
    return this.machineState;
  }

  /** The primary this client sends `topic`/`partition` to, as last learned ('' while it has none). */
  routeOf(topic: string, partition: number): string | undefined {
    return this.routes.get(routeKey(topic, partition));
  }

  /** Partitions and offsets (METADATA through any broker); the routes in the answer are kept. */
  async metadata(...topics: string[]): Promise<TopicMetadata[]> {
    const answer = await this.metadataWithRoutes(...topics);
    return answer.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map(({ partition, logStartOffset, highWatermark }) => ({
        partition,
        logStartOffset,
        highWatermark,
      })),
    }));
  }

  /** METADATA with routes and the spec revision, through any broker, at least at the revision of the last APPLY. */
  async metadataWithRoutes(...topics: string[]): Promise<MetadataResponseV2> {
    return this.withRetries('METADATA', async (attempt) => {
      const broker = await this.anyBroker(attempt.avoid);
      attempt.at = broker.address;
      return this.readRoutes(broker, topics);
    });
  }

  /**
   * METADATA v4 through any broker that speaks it: every partition's epoch and replicas, each with
   * its zone, whether it is in sync and live, and its lag behind the primary.
   */
  async metadataWithReplicas(...topics: string[]): Promise<MetadataResponseV4> {
    return this.withRetries('METADATA', async (attempt) => {
      const broker = await this.anyBroker(attempt.avoid);
      attempt.at = broker.address;
      if (!broker.speaks(ApiKey.METADATA, 'replicaRoutes')) {
        // A broker that predates it: as if it had answered UNSUPPORTED_VERSION (not retried).
        throw new BrokerError(ErrorCode.UNSUPPORTED_VERSION, `METADATA v4 to ${broker.address}`, { topics });
      }
      return broker.connection.metadataWithReplicas(topics, this.minRevision);
    });
  }

  /**
   * METADATA v5 through any broker that speaks it: metadataWithReplicas() with, per partition, where
   * its offsets come from (the primary, a copy while the primary does not answer, or not known).
   */
  async metadataWithOffsets(...topics: string[]): Promise<MetadataResponseV5> {
    return this.withRetries('METADATA', async (attempt) => {
      const broker = await this.anyBroker(attempt.avoid);
      attempt.at = broker.address;
      if (!broker.speaks(ApiKey.METADATA, 'offsetSources')) {
        throw new BrokerError(ErrorCode.UNSUPPORTED_VERSION, `METADATA v5 to ${broker.address}`, { topics });
      }
      return broker.connection.metadataWithOffsets(topics, this.minRevision);
    });
  }

  /** PRODUCE to the partition's primary, following its route (see the class comment for what a resend means). */
  produce(
    topic: string,
    partition: number,
    records: readonly Uint8Array[],
    options: ProduceOptions = {},
  ): Promise<ProduceResult | null> {
    return this.onPrimary(topic, partition, `PRODUCE ${topic}/${partition}`, (broker) =>
      broker.connection.produce(topic, partition, records, {
        ...options,
        // PRODUCE v3 means "I follow routes": sent only to a broker that serves it.
        followRoutes: broker.speaks(ApiKey.PRODUCE, 'followsRoutes'),
      }),
    );
  }

  /**
   * FETCH from the partition's primary, following its route; with preferZone, from an in-sync
   * replica in that zone when there is one.
   */
  fetch(request: FetchOptions, options: RequestOptions = {}): Promise<FetchResult> {
    if (this.preferZone === undefined) return this.fetchFromPrimary(request, options);
    const key = routeKey(request.topic, request.partition);
    return this.fetchNear(key, this.preferZone, request, options).then((result) =>
      this.highWatermarks.raise(key, result),
    );
  }

  /**
   * Every fetch may carry the epoch read last: it is sent as FETCH v5 to a broker that has it, and
   * without it (v3, v4) to one that does not.
   */
  speaksFetchEpochs(): Promise<boolean> {
    return Promise.resolve(true);
  }

  private fetchFromPrimary(request: FetchOptions, options: RequestOptions): Promise<FetchResult> {
    const { topic, partition } = request;
    return this.onPrimary(
      topic,
      partition,
      `FETCH ${topic}/${partition} at ${request.offset}`,
      (broker) =>
        broker.connection.fetch(
          epochIfSpoken(broker, { ...request, followRoutes: broker.speaks(ApiKey.FETCH, 'followsRoutes') }),
          options,
        ),
      options.signal,
    );
  }

  /**
   * A fetch sent to the replica in `zone` the partition's RouteV2 names (METADATA first when none is
   * known). A replica that refuses it (NOT_PRIMARY: out of the in-sync set, or holding less than the
   * offset; another retriable code; a lost connection) is left: the fetch goes to the primary, and
   * the route is read again before a replica is picked next time.
   */
  private async fetchNear(
    key: string,
    zone: string,
    request: FetchOptions,
    options: RequestOptions,
  ): Promise<FetchResult> {
    if (!this.replicaRoutes.has(key)) {
      try {
        await this.metadataWithRoutes(request.topic);
      } catch (error) {
        if (!(error instanceof BrokerError || isConnectionLoss(error))) throw error;
        // The primary's own retries decide what the caller is told.
      }
    }
    const route = this.replicaRoutes.get(key);
    const inZone = route ? readerInZone(route, zone) : undefined;
    const reader = inZone === undefined ? undefined : this.pool.learn(inZone);
    if (reader === undefined || reader === this.routes.get(key))
      return this.fetchFromPrimary(request, options);
    try {
      const broker = await this.pool.get(reader);
      if (!broker.speaks(ApiKey.FETCH, 'replicaReadable')) {
        this.replicaRoutes.set(key, null);
        return await this.fetchFromPrimary(request, options);
      }
      return await broker.connection.fetch(epochIfSpoken(broker, { ...request, fromReplica: true }), options);
    } catch (error) {
      const lost = isConnectionLoss(error);
      if (!lost && !(error instanceof BrokerError && error.retriable)) throw error;
      if (lost) this.pool.drop(reader);
      if (error instanceof NotPrimaryError && error.route.primary !== '') {
        this.routes.set(key, this.pool.learn(error.route.primary));
      }
      this.replicaRoutes.delete(key);
      return this.fetchFromPrimary(request, options);
    }
  }

  /**
   * APPLY through any broker. The revision it returns becomes the least the next METADATA asks for
   * (v3), so a topic created here is usable at once through every broker of the cluster.
   */
  async applyTopics(changes: readonly TopicChangeInput[], options: ApplyOptions = {}): Promise<ApplyResult> {
    const result = await (await this.anyBroker()).connection.applyTopics(changes, options);
    if (!options.dryRun) this.minRevision = Math.max(this.minRevision, result.revision);
    return result;
  }

  async listTopics(selector = '', options: RequestOptions = {}): Promise<TopicListing> {
    return (await this.anyBroker()).connection.listTopics(selector, options);
  }

  async *watchTopics(selector = '', options: WatchOptions = {}): AsyncGenerator<TopicListing> {
    yield* (await this.anyBroker()).connection.watchTopics(selector, options);
  }

  async apiVersions(): Promise<readonly ApiVersionRange[]> {
    return (await this.anyBroker()).connection.apiVersions();
  }

  /** A topic handle whose sends follow routes. */
  topic(name: string, options: TopicOptions = {}): Promise<Topic> {
    return Topic.load(this, name, options);
  }

  /** A consumer of one partition whose fetches go to its primary. */
  consumer(topic: string, partition: number, offset: number, options: ConsumerOptions = {}): Consumer {
    return new Consumer(this, topic, partition, offset, { dial: () => Promise.resolve(this), ...options });
  }

  /** Consumers dial again after losses; a Client already does, so it stands in for itself. */
  redial(): Promise<Client> {
    return Promise.resolve(this);
  }

  /** Closes every broker connection, each after the answers still due on it. */
  async close(): Promise<void> {
    if (this.machineState === 'open') {
      this.machineState = 'closed';
      await this.pool.closeAll();
      this.markClosed(undefined);
    }
    await this.closed;
  }

  /** The first known broker that connects: connected ones first, `avoid` (one that just failed) last. */
  private async anyBroker(avoid?: string): Promise<PooledBroker> {
    let last: Error | undefined;
    for (const address of this.pool.candidates(avoid)) {
      try {
        return await this.pool.get(address);
      } catch (error) {
        if (!isConnectionLoss(error)) throw error;
        last = error as Error;
      }
    }
    throw last ?? new ConnectError('(no broker)', 'no broker address is known');
  }

  /**
   * METADATA v3 (at the client's revision) when the broker has it, else v2, else v1 (the broker is
   * every route); v4 with preferZone, whose RouteV2s are kept for picking replicas.
   */
  private async readRoutes(broker: PooledBroker, topics: readonly string[]): Promise<MetadataResponseV2> {
    const speaks = (capability: Capability) => broker.speaks(ApiKey.METADATA, capability);
    let answer: MetadataResponseV2;
    if (this.preferZone !== undefined && speaks('replicaRoutes')) {
      const v4 = await broker.connection.metadataWithReplicas(topics, this.minRevision);
      answer = {
        revision: v4.revision,
        topics: v4.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => {
            this.replicaRoutes.set(routeKey(t.name, p.partition), p.route);
            return { ...p, route: inSyncRouteOf(p.route) };
          }),
        })),
      };
    } else if (speaks('atRevision'))
      answer = await broker.connection.metadataAtRevision(topics, this.minRevision);
    else if (speaks('routes')) answer = await broker.connection.metadataWithRoutes(...topics);
    else {
      const v1 = await broker.connection.metadata(...topics);
      answer = {
        revision: 0,
        topics: v1.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ ...p, route: { primary: broker.address, replicas: [] } })),
        })),
      };
    }
    for (const t of answer.topics) {
      for (const p of t.partitions) {
        const key = routeKey(t.name, p.partition);
        const primary = p.route.primary === '' ? '' : this.pool.learn(p.route.primary);
        for (const replica of p.route.replicas) this.pool.learn(replica);
        this.routes.set(key, primary);
        // Reads go to primaries only when the broker could not say where replicas are.
        if (this.preferZone !== undefined && !this.replicaRoutes.has(key)) this.replicaRoutes.set(key, null);
      }
    }
    return answer;
  }

  /** Sends to the partition's primary, following NOT_PRIMARY, pausing on NO_PRIMARY, failing over on a lost connection. */
  private onPrimary<T>(
    topic: string,
    partition: number,
    what: string,
    send: (broker: PooledBroker) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const key = routeKey(topic, partition);
    const onRetriable = (error: Error): 'at-once' | 'pause' => {
      if (error instanceof NotPrimaryError) {
        const next = error.route.primary === '' ? '' : this.pool.learn(error.route.primary);
        this.routes.set(key, next);
        this.replicaRoutes.delete(key);
        return next !== '' ? 'at-once' : 'pause';
      }
      this.routes.delete(key); // read again from METADATA after the pause
      this.replicaRoutes.delete(key);
      return 'pause';
    };
    const step = async (attempt: Attempt): Promise<T> => {
      let primary = this.routes.get(key);
      if (primary === undefined) {
        // Not known yet: METADATA names it. A partition the answer lacks is the answering broker's
        // to refuse (UNKNOWN_TOPIC_OR_PARTITION), so the request goes there.
        const broker = await this.anyBroker(attempt.avoid);
        attempt.at = broker.address;
        await this.readRoutes(broker, [topic]);
        primary = this.routes.get(key) ?? broker.address;
      }
      if (primary === '') throw new BrokerError(ErrorCode.NO_PRIMARY, what, { topics: [topic], partition });
      attempt.at = primary;
      return send(await this.pool.get(primary));
    };
    // The common case, a known route to an open connection, writes the request without an await
    // first (client CPU per pipelined request about 15 µs without this, 6 with, Connection 4: measured
    // on one broker); anything else takes the loop.
    const primary = this.routes.get(key);
    const ready = primary ? this.pool.ready(primary) : undefined;
    const subject = { topics: [topic], partition };
    if (ready === undefined || this.machineState !== 'open') {
      return this.withRetries(what, step, onRetriable, signal, undefined, subject);
    }
    return send(ready).catch((error: Error) =>
      this.withRetries(what, step, onRetriable, signal, { error, at: ready.address }, subject),
    );
  }

  /** See `withRetries` in retries.ts. */
  private withRetries<T>(
    what: string,
    step: (attempt: Attempt) => Promise<T>,
    onRetriable?: (error: Error) => 'at-once' | 'pause',
    signal?: AbortSignal,
    failed?: { error: Error; at: string },
    subject?: RequestSubject,
  ): Promise<T> {
    return withRetries(this.retryPolicy, what, step, onRetriable, signal, failed, subject);
  }
}

function routeKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** The request without its lastEpoch for a broker without FETCH v5 (it is sent as v3 or v4 then). */
function epochIfSpoken(broker: PooledBroker, request: FetchOptions): FetchOptions {
  if (request.lastEpoch === undefined || broker.speaks(ApiKey.FETCH, 'carriesEpochs')) return request;
  const { lastEpoch: _unsent, ...rest } = request;
  return rest;
}
