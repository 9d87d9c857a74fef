import type { Logger, Partition, RemoteHistory } from '@booblik/log';
import {
  type Clock,
  delay,
  systemClock,
  type TimerHandle,
  type TopicSpec,
  unrefTimer,
} from '@booblik/protocol';
import { type ObjectStore, openStore } from '@booblik/store';
import { compressionOf } from './compression.js';
import { FragmentCache, StoreFragmentSource, type StoreReadStats } from './fragment-cache.js';
import { loadManifest, type Manifest } from './manifest.js';
import { PartitionPersister, type PersisterStats } from './partition-persister.js';
import { StoreHealth } from './store-health.js';

/**
 * A closed segment is looked for this often (rolls are not announced): at W1's rate a 512 MiB segment
 * closes every few seconds, so a second's delay keeps the backlog at about one segment.
 */
export const PERSIST_CHECK_MS = 1000;
/** How long a partition's open waits for its store's manifest before opening without its history. */
export const RESTORE_WAIT_MS = 10_000;

/** What purging one partition's history from its store did. */
export interface StorePurge {
  partition: number;
  /** The store, as its URL is logged (normalized, no credentials). */
  storeUrl: string;
  /** Objects deleted. */
  objects: number;
  /** Why it stopped short, when it did. */
  error?: string;
}

/** What the broker's partitions hand over when one opens or goes. */
export interface PartitionOpenHooks {
  /**
   * The history to open with, from the store the topic's spec names (none without a store).
   * `created`: the partition is new in the topic table, so a history found is an earlier topic's.
   */
  remoteFor(topic: string, id: number, created?: boolean): Promise<RemoteHistory | undefined>;
  opened(partition: Partition): void;
  /**
   * The partition is no longer served here (deleted, or moved away). `purgeStore`: its topic was
   * deleted asking for its history to go from its store too; resolves with what that did (nothing
   * for a topic without a store).
   */
  closed(partition: Partition, purgeStore: boolean): Promise<StorePurge | undefined>;
}

interface TopicStore {
  store: ObjectStore;
  source: StoreFragmentSource;
}

/**
 * The persisters of every partition whose topic names a store: opens the stores, restores a
 * partition's history when it opens, uploads closed segments, applies retention to the store.
 */
export class PersisterService implements PartitionOpenHooks {
  readonly health: StoreHealth;
  readonly stats: PersisterStats = {
    uploads: 0,
    uploadedBytes: 0,
    storeRequests: 0,
    failures: 0,
    deletions: 0,
  };
  readonly readStats: StoreReadStats = { requests: 0, bytes: 0, cacheHits: 0 };
  readonly cache: FragmentCache;
  private readonly stores = new Map<string, Promise<TopicStore>>();
  private readonly persisters = new Map<Partition, PartitionPersister>();
  /** Persisters per store URL: a store none of them uses is forgotten by the health report. */
  private readonly persistersByUrl = new Map<string, number>();
  /** Manifests read at open, handed to the partition's persister once it exists. */
  private readonly manifests = new Map<string, Manifest>();
  private timer: TimerHandle | undefined;
  private closing = false;

  constructor(
    private readonly specOf: (topic: string) => TopicSpec | undefined,
    cacheBytes: number,
    private readonly logger: Logger,
    /**
     * In a cluster the primaries number epochs by their terms: a restore there begins none of its
     * own, so the manifest's past is not handed to the log.
     */
    private readonly clustered = false,
    /**
     * In a cluster: whether this broker uploads a partition's segments now. Only a replicated
     * partition's primary uploads; a replica holds the same segments (boundaries follow the bytes,
     * and every replica writes the same bytes), drops local copies of those the primary's manifest
     * lists with the same bytes, and reads the manifest afresh when it becomes primary.
     */
    private readonly uploadsHere: (topic: string, id: number) => boolean = () => true,
    private readonly clock: Clock = systemClock,
  ) {
    this.health = new StoreHealth(logger);
    this.cache = new FragmentCache(cacheBytes);
  }

  /** Looks for closed segments every PERSIST_CHECK_MS until closed. */
  start(): void {
    if (this.closing) return;
    this.timer = this.clock.setTimeout(() => {
      this.kickAll();
      this.start();
    }, PERSIST_CHECK_MS);
    unrefTimer(this.timer);
  }

  kickAll(): void {
    for (const p of this.persisters.values()) p.kick();
  }

  persisterOf(partition: Partition): PartitionPersister | undefined {
    return this.persisters.get(partition);
  }

  /** Closed segments not yet uploaded, over every partition. */
  get backlog(): number {
    let n = 0;
    for (const p of this.persisters.values()) n += p.backlog;
    return n;
  }

  /** Lines for /readyz: failing stores and partitions whose history could not be joined. */
  detail(): string[] {
    const lines = this.health.detail();
    for (const p of this.persisters.values()) {
      if (p.problem !== undefined) lines.push(`partition ${p.partition.name}: ${p.problem}`);
    }
    return lines;
  }

  async remoteFor(topic: string, id: number, created = false): Promise<RemoteHistory | undefined> {
    const spec = this.specOf(topic);
    if (spec === undefined || spec.storeUrl === '') return undefined;
    const { store, source } = await this.storeOf(spec);
    // A store found down by an earlier partition gets one try, not a wait per partition.
    const deadline = this.health.isFailing(store.url) ? 0 : this.clock.now() + RESTORE_WAIT_MS;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
      try {
        this.stats.storeRequests++;
        const { manifest } = await loadManifest(store, topic, id, this.logger);
        this.health.succeeded(store.url);
        this.manifests.set(`${topic}\0${id}`, manifest);
        const end = manifest.fragments.at(-1)?.endOffset;
        if (created && end !== undefined) {
          this.logger.warn(
            `${topic}-${id}: created over the history an earlier topic of this name left in store ${store.url} (offsets ${manifest.fragments[0]!.baseOffset}..${end}, ${manifest.fragments.length} fragment(s)): it continues that history at offset ${end}; booblik topics delete --purge-store removes a history with its topic`,
          );
        }
        if (this.clustered) return { source, fragments: manifest.fragments };
        const past = { epochs: manifest.epochs ?? [], highWatermark: manifest.highWatermark ?? null };
        return { source, fragments: manifest.fragments, past };
      } catch (error) {
        this.health.failed(store.url, error);
        if (this.clock.now() + wait > deadline) {
          this.logger.error(
            `${topic}-${id}: opened without the store's history (${String(error)}); uploads wait until the store answers`,
          );
          return { source, fragments: [] };
        }
        await delay(this.clock, wait);
      }
    }
  }

  opened(partition: Partition): void {
    const spec = this.specOf(partition.topic);
    if (spec === undefined || spec.storeUrl === '' || this.persisters.has(partition)) return;
    const key = `${partition.topic}\0${partition.id}`;
    const manifest = this.manifests.get(key);
    this.manifests.delete(key);
    void this.storeOf(spec).then(
      ({ store }) => {
        if (this.persisters.has(partition)) return;
        const persister = new PartitionPersister(
          partition,
          store,
          this.health,
          this.stats,
          this.logger,
          manifest,
          () => this.uploadsHere(partition.topic, partition.id),
          this.clock,
        );
        this.persisters.set(partition, persister);
        this.persistersByUrl.set(store.url, (this.persistersByUrl.get(store.url) ?? 0) + 1);
        persister.kick();
      },
      (error: unknown) => this.logger.error(`${partition.name}: store ${spec.storeUrl}: ${String(error)}`),
    );
  }

  async closed(partition: Partition, purgeStore: boolean): Promise<StorePurge | undefined> {
    const persister = this.persisters.get(partition);
    this.persisters.delete(partition);
    if (persister === undefined) return undefined;
    const storeUrl = persister.storeUrl;
    try {
      if (!purgeStore) {
        await persister.close();
        return undefined;
      }
      try {
        return { partition: partition.id, storeUrl, objects: await persister.purge() };
      } catch (error) {
        return { partition: partition.id, storeUrl, objects: 0, error: String(error) };
      }
    } finally {
      const users = (this.persistersByUrl.get(storeUrl) ?? 1) - 1;
      if (users > 0) this.persistersByUrl.set(storeUrl, users);
      else {
        this.persistersByUrl.delete(storeUrl);
        this.health.forget(storeUrl);
      }
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.clock.clearTimeout(this.timer);
    await Promise.all([...this.persisters.values()].map((p) => p.close()));
    this.persisters.clear();
    for (const s of this.stores.values())
      void s.then(
        ({ store }) => store.close(),
        () => {},
      );
  }

  private storeOf(spec: TopicSpec): Promise<TopicStore> {
    const compression = compressionOf(spec);
    const id = `${spec.storeUrl} ${compression}`;
    let opened = this.stores.get(id);
    if (opened === undefined) {
      opened = openStore(spec.storeUrl, { compression }).then((store) => ({
        store,
        source: new StoreFragmentSource(store, this.cache, compression !== 'none', this.readStats),
      }));
      this.stores.set(id, opened);
      opened.catch(() => this.stores.delete(id));
    }
    return opened;
  }
}

/**
 * Logs the one line a topic deleted with its store history gets on each broker that held it: the
 * store and how many objects went, or (an error) what is left to remove by hand. `expected`: the
 * partitions that should have been purged here (one node: all of the topic's), so that one that was
 * not open (it could not be opened, or its store never was) is not passed over in silence.
 */
export function logPurge(
  logger: Logger,
  topic: string,
  purges: readonly StorePurge[],
  expected?: { partitions: number; storeUrl: string },
): void {
  const missing =
    expected === undefined
      ? []
      : [...Array(expected.partitions).keys()].filter((id) => !purges.some((p) => p.partition === id));
  if (purges.length === 0 && missing.length === 0) return;
  const stores = [...new Set(purges.map((p) => p.storeUrl))].join(', ') || expected?.storeUrl;
  const objects = purges.reduce((n, p) => n + p.objects, 0);
  const failed = purges.filter((p) => p.error !== undefined);
  const summary = `${objects} object(s) of ${purges.length} partition(s) removed from store ${stores}`;
  if (failed.length === 0 && missing.length === 0) {
    logger.info(`topic ${topic}: deleted with its store history: ${summary}`);
    return;
  }
  const why =
    failed.length > 0
      ? `partition ${failed[0]!.partition}: ${failed[0]!.error}${failed.length > 1 ? ` and ${failed.length - 1} more` : ''}`
      : `partition(s) ${missing.join(', ')} not open here, so not purged`;
  logger.error(
    `topic ${topic}: deleted, but its store history was not all removed (${summary}; ${why}): remove what is left under ${topic}/ with the store's tools`,
  );
}
