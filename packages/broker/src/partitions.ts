import fs from 'node:fs';
import path from 'node:path';
import {
  type AppendBatch,
  type AppendResult,
  type AppendWaiter,
  type EpochHistory,
  fsyncDir,
  type HighWatermark,
  type LogConfig,
  type Logger,
  type OpenReport,
  Partition,
  partitionDirName,
  type ReadResult,
  type WriterStats,
} from '@booblik/log';
import { type AckPolicyValue, ReplicaFlag, type Route, type RouteV2 } from '@booblik/protocol';
import { dirNameBytesMax } from './dir-names.js';
import type { PartitionOpenHooks, StorePurge } from './persister/persister-service.js';

export interface PartitionReport extends OpenReport {
  topic: string;
  partition: number;
}

/** What the handlers use of a partition served here (a replicated one will sit behind the same surface). */
export interface ServedPartition {
  readonly topic: string;
  readonly id: number;
  readonly name: string;
  readonly highWatermark: HighWatermark;
  readonly logStartOffset: number;
  /** The offset the next record written gets. */
  readonly logEndOffset: number;
  /** Which epoch wrote which records: what FETCH v5 answers by. */
  readonly epochs: Pick<EpochHistory, 'latestEpoch' | 'endOf' | 'spanAt'>;
  readonly sizeBytes: number;
  readonly segmentCount: number;
  readonly writerStats: Readonly<WriterStats>;
  readonly blockedBatches: number;
  append(batch: AppendBatch, ack: AckPolicyValue): Promise<AppendResult>;
  /** `append` for a caller that keeps its own state: `waiter` is told the outcome, maybe at once. */
  appendTo(batch: AppendBatch, ack: AckPolicyValue, waiter: AppendWaiter): void;
  read(offset: number, maxBytes: number): Promise<ReadResult>;
  /** `read` when no disk read is needed (from the tail, or empty at the end); else null. */
  readNow(offset: number, maxBytes: number): ReadResult | null;
}

/** Where (topic, partition) is served: here, on another broker (the cluster fills this in), or nowhere. */
export type Resolution =
  | { kind: 'local'; partition: ServedPartition }
  | { kind: 'remote'; route: Route }
  /** The partition exists but nobody serves it now (its broker's lease expired, or it is opening). */
  | { kind: 'none' }
  /** It is this broker's to serve, but it could not be opened here (FailedPartition.problem). */
  | { kind: 'failed'; problem: string }
  | { kind: 'unknown' };

/** A partition this broker could not open (its directory could not be made or read): reported, not served. */
export interface FailedPartition {
  topic: string;
  id: number;
  problem: string;
}

/** The lookup every handler goes through. */
export interface PartitionResolver {
  resolve(topic: string, partition: number): Resolution;
  /** The route LIST and METADATA answer; `self` is this broker as the client reached it. */
  routeOf(topic: string, partition: number, self: string): Route;
  /** The route with the epoch and every replica (METADATA v4, LIST v2); lags when `withLag` and known here. */
  routeV2Of(topic: string, partition: number, self: string, withLag: boolean): RouteV2;
}

interface TopicEntry {
  /** By id. On one node every id up to the count; in a cluster only those this broker owns (holes). */
  partitions: Partition[];
  readOnly: boolean;
}

const UNKNOWN: Resolution = { kind: 'unknown' };
const NO_ROUTE: Route = { primary: '', replicas: [] };

/**
 * The partitions served here, by (topic, partition). Topics are added, grown, reconfigured and
 * removed at runtime by the topic service; handlers only resolve. A removed partition is *retired*:
 * whoever still holds it (a held FETCH, a PRODUCE in the writer queue) is told, answers
 * UNKNOWN_TOPIC_OR_PARTITION, and its files go once no read holds them.
 */
export class PartitionRegistry implements PartitionResolver {
  private readonly topics = new Map<string, TopicEntry>();
  private sortedNames: string[] | null = null;
  private readonly retired = new WeakSet<ServedPartition>();
  private selfRoute: Route = { primary: '', replicas: [] };
  private selfRouteV2: RouteV2 = { epoch: 0, primary: '', replicas: [] };
  private readonly retireCallbacks = new Map<ServedPartition, Set<() => void>>();
  /** Directory removals under way: a topic created again under the same name waits for them. */
  private readonly removals = new Map<string, Promise<void>>();
  private nameBytesMax: number | undefined;
  /** By topic, then id: partitions whose open failed. Tried again at the next start. */
  private readonly failures = new Map<string, Map<number, FailedPartition>>();

  constructor(
    private readonly dataDir: string,
    private readonly logConfig: Readonly<LogConfig>,
    private readonly logger: Logger,
    /** A topic's store: its history restored at open, its segments persisted (persister/). */
    private readonly openHooks?: PartitionOpenHooks,
  ) {}

  /** The longest partition directory name the data directory takes (probed once, when first asked). */
  get dirNameBytesMax(): number {
    this.nameBytesMax ??= dirNameBytesMax(path.resolve(this.dataDir));
    return this.nameBytesMax;
  }

  /** The log of a partition served here, for what works on segments (the persister, LIST_FRAGMENTS). */
  localPartition(topic: string, id: number): Partition | undefined {
    return this.topics.get(topic)?.partitions[id];
  }

  resolve(topic: string, id: number): Resolution {
    const partition = this.topics.get(topic)?.partitions[id];
    if (partition !== undefined) return { kind: 'local', partition };
    const failed = this.failureOf(topic, id);
    return failed === undefined ? UNKNOWN : { kind: 'failed', problem: failed.problem };
  }

  /** Why the partition could not be opened here, if it could not. */
  failureOf(topic: string, id: number): FailedPartition | undefined {
    return this.failures.get(topic)?.get(id);
  }

  /** Every partition that could not be opened, for /readyz and the metrics. */
  failed(): FailedPartition[] {
    return [...this.failures.values()].flatMap((byId) => [...byId.values()]);
  }

  /** On one node every partition is served here (but one that failed to open, which has no primary). */
  routeOf(topic: string, partition: number, self: string): Route {
    if (this.failures.size > 0 && this.failureOf(topic, partition) !== undefined) return NO_ROUTE;
    // One object for every partition of an answer (a LIST or METADATA of thousands of them).
    if (this.selfRoute.primary !== self) this.selfRoute = { primary: self, replicas: [] };
    return this.selfRoute;
  }

  /** On one node: epoch 0, this broker the one replica, always in sync and level. */
  routeV2Of(topic: string, partition: number, self: string): RouteV2 {
    if (this.failures.size > 0 && this.failureOf(topic, partition) !== undefined) {
      return { epoch: 0, primary: '', replicas: [] };
    }
    if (this.selfRouteV2.primary !== self) {
      const flags = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
      this.selfRouteV2 = {
        epoch: 0,
        primary: self,
        replicas: [{ member: '', address: self, zone: '', flags, lagRecords: 0, lagMillis: 0 }],
      };
    }
    return this.selfRouteV2;
  }

  /** The partition when it is served here. */
  get(topic: string, id: number): ServedPartition | undefined {
    return this.topics.get(topic)?.partitions[id];
  }

  partitionsOf(topic: string): readonly ServedPartition[] | undefined {
    return this.topics.get(topic)?.partitions;
  }

  isReadOnly(topic: string): boolean {
    return this.topics.get(topic)?.readOnly ?? false;
  }

  /** Topic names, sorted: METADATA answers in this order. */
  topicNames(): string[] {
    this.sortedNames ??= [...this.topics.keys()].sort();
    return this.sortedNames;
  }

  *all(): Iterable<ServedPartition> {
    for (const t of this.topics.values()) yield* served(t);
  }

  /** Opens (recovering) every partition of a topic at startup, synchronously, with the broker's settings. */
  addTopic(spec: { name: string; partitions: number }, logConfig = this.logConfig): PartitionReport[] {
    if (this.topics.has(spec.name)) throw new Error(`topic ${spec.name} exists`);
    const partitions: Partition[] = [];
    const reports: PartitionReport[] = [];
    for (let id = 0; id < spec.partitions; id++) {
      let opened: ReturnType<typeof Partition.open>;
      try {
        opened = Partition.open(path.resolve(this.dataDir), spec.name, id, logConfig, {
          logger: this.logger,
        });
      } catch (error) {
        this.openFailed(spec.name, id, error);
        partitions.length = id + 1; // a hole: the other partitions keep their ids
        continue;
      }
      partitions[id] = opened.partition;
      reports.push({ topic: spec.name, partition: id, ...opened.report });
    }
    this.topics.set(spec.name, { partitions, readOnly: false });
    this.sortedNames = null;
    return reports;
  }

  /**
   * Opens partitions `[served .. count)` of a topic at runtime, the recovery scans in a worker thread.
   * `fresh`: the topic or these partitions are new in the spec store, so files left by an earlier
   * topic of the same name (a deletion cut short by a crash) are removed first: it starts empty.
   */
  async growTopic(
    name: string,
    count: number,
    logConfig: Readonly<LogConfig>,
    fresh: boolean,
  ): Promise<PartitionReport[]> {
    let entry = this.topics.get(name);
    if (entry === undefined) {
      entry = { partitions: [], readOnly: false };
      this.topics.set(name, entry);
      this.sortedNames = null;
    }
    const reports: PartitionReport[] = [];
    // Partitions open one after another: each becomes servable as soon as it is open, in id order.
    for (let id = entry.partitions.length; id < count; id++) {
      const dirName = partitionDirName(name, id);
      await this.removals.get(dirName);
      let opened: Awaited<ReturnType<PartitionRegistry['openOne']>>;
      try {
        if (fresh) this.removeLeftovers(name, id);
        opened = await this.openOne(name, id, logConfig, false, fresh);
      } catch (error) {
        if (this.topics.get(name) !== entry) break;
        this.openFailed(name, id, error);
        entry.partitions.length = id + 1; // a hole: the next partitions keep their ids
        continue;
      }
      const { partition, report } = opened;
      if (this.topics.get(name) !== entry) {
        // Deleted while it opened: nothing may serve it.
        void this.retire(partition);
        break;
      }
      entry.partitions.push(partition);
      this.openHooks?.opened(partition);
      reports.push({ topic: name, partition: id, ...report });
    }
    return reports;
  }

  /**
   * Opens one partition at runtime (a cluster broker serves only those it owns); resolves with what
   * its recovery found, or null if it is open already or its topic was removed while it opened.
   */
  async openPartition(
    name: string,
    id: number,
    logConfig: Readonly<LogConfig>,
    readOnly: boolean,
    /**
     * A replicated partition: nothing it recovered is readable until its primary's commit offset
     * covers it, so a tail it holds past the last commit can still be cut if it diverged.
     */
    heldBack = false,
  ): Promise<PartitionReport | null> {
    let entry = this.topics.get(name);
    if (entry === undefined) {
      entry = { partitions: [], readOnly };
      this.topics.set(name, entry);
      this.sortedNames = null;
    }
    // One that failed is tried again at the next start, not at every change of the cluster.
    if (entry.partitions[id] !== undefined || this.failureOf(name, id) !== undefined) return null;
    await this.removals.get(partitionDirName(name, id));
    let opened: Awaited<ReturnType<PartitionRegistry['openOne']>>;
    try {
      opened = await this.openOne(name, id, logConfig, heldBack);
    } catch (error) {
      if (this.topics.get(name) === entry) this.openFailed(name, id, error);
      return null;
    }
    const { partition, report } = opened;
    if (this.topics.get(name) !== entry || entry.partitions[id] !== undefined) {
      await partition.close();
      return null;
    }
    entry.partitions[id] = partition;
    this.openHooks?.opened(partition);
    return { topic: name, partition: id, ...report };
  }

  /** Opens one partition in a worker thread; a topic with a store starts where the store's history ends. */
  private async openOne(
    name: string,
    id: number,
    logConfig: Readonly<LogConfig>,
    heldBack = false,
    created = false,
  ) {
    const remote = await this.openHooks?.remoteFor(name, id, created);
    return Partition.openAsync(path.resolve(this.dataDir), name, id, logConfig, {
      logger: this.logger,
      ...(heldBack ? { highWatermark: 0 } : {}),
      ...(remote === undefined ? {} : { remote }),
    });
  }

  /** Reports a partition that cannot be opened; every other partition is served on. */
  private openFailed(topic: string, id: number, error: unknown): void {
    const problem = error instanceof Error ? error.message : String(error);
    let byId = this.failures.get(topic);
    if (byId === undefined) {
      byId = new Map();
      this.failures.set(topic, byId);
    }
    byId.set(id, { topic, id, problem });
    this.logger.error(
      `partition ${partitionDirName(topic, id)}: cannot be opened, not served (PRODUCE, FETCH and METADATA of it answer STORAGE_ERROR; fixed, it opens at the next start): ${problem}`,
    );
  }

  /**
   * Removes a partition's directory left by an earlier topic of the same name, durably: the new
   * partition must never find the old records again after a crash.
   */
  removeLeftovers(name: string, id: number): void {
    const dataDir = path.resolve(this.dataDir);
    const dir = path.join(dataDir, partitionDirName(name, id));
    if (!fs.existsSync(dir)) return;
    this.logger.warn(`${path.basename(dir)}: removing files left by a deleted topic of the same name`);
    fs.rmSync(dir, { recursive: true, force: true });
    fsyncDir(dataDir);
  }

  /** Stops serving one partition (moved to another broker) and removes its files, as a delete does. */
  removePartition(topic: string, id: number): Promise<void> {
    this.failures.get(topic)?.delete(id);
    const entry = this.topics.get(topic);
    const partition = entry?.partitions[id];
    if (entry === undefined || partition === undefined) return Promise.resolve();
    delete entry.partitions[id];
    return this.retire(partition).then(() => {});
  }

  setReadOnly(topic: string, readOnly: boolean): void {
    const entry = this.topics.get(topic);
    if (entry !== undefined) entry.readOnly = readOnly;
  }

  /** New settings for every partition of a topic (its spec changed). */
  reconfigure(topic: string, logConfig: Readonly<LogConfig>): void {
    const entry = this.topics.get(topic);
    if (entry !== undefined) for (const p of served(entry)) p.reconfigure(logConfig);
  }

  /**
   * Stops serving a topic at once; its holders are told, its files removed once its writers have
   * drained and no read holds them. With `purgeStore` each partition's history goes from the
   * topic's store too, after its last upload. Resolves when the files are gone, with what each
   * partition's purge did.
   */
  removeTopic(topic: string, options: { purgeStore?: boolean } = {}): Promise<StorePurge[]> {
    this.failures.delete(topic);
    const entry = this.topics.get(topic);
    if (entry === undefined) return Promise.resolve([]);
    this.topics.delete(topic);
    this.sortedNames = null;
    const purgeStore = options.purgeStore ?? false;
    return Promise.all([...served(entry)].map((p) => this.retire(p, purgeStore))).then((purges) =>
      purges.filter((p): p is StorePurge => p !== undefined),
    );
  }

  private retire(partition: Partition, purgeStore = false): Promise<StorePurge | undefined> {
    this.retired.add(partition);
    const callbacks = this.retireCallbacks.get(partition);
    this.retireCallbacks.delete(partition);
    for (const callback of callbacks ?? []) callback();
    const dirName = partitionDirName(partition.topic, partition.id);
    let purge: StorePurge | undefined;
    const removal: Promise<void> = Promise.resolve(this.openHooks?.closed(partition, purgeStore))
      .then((purged) => {
        purge = purged;
        return partition.remove();
      })
      .catch((error: unknown) =>
        this.logger.error(`${partition.name}: removing files failed: ${String(error)}`),
      )
      .finally(() => {
        if (this.removals.get(dirName) === removal) this.removals.delete(dirName);
      });
    this.removals.set(dirName, removal);
    this.logger.info(`partition ${partition.name}: deleted`);
    return removal.then(() => purge);
  }

  /** Whether the partition's topic was deleted after the caller looked it up. */
  isRetired(partition: ServedPartition): boolean {
    return this.retired.has(partition);
  }

  /** Calls `callback` once if the partition is retired; returns the function that unregisters it. */
  onRetire(partition: ServedPartition, callback: () => void): () => void {
    if (this.retired.has(partition)) {
      callback();
      return () => {};
    }
    let set = this.retireCallbacks.get(partition);
    if (set === undefined) {
      set = new Set();
      this.retireCallbacks.set(partition, set);
    }
    set.add(callback);
    return () => set.delete(callback);
  }

  enforceRetention(nowMs = Date.now()): void {
    for (const t of this.topics.values()) {
      for (const p of served(t)) {
        try {
          p.enforceRetention(nowMs);
        } catch (error) {
          this.logger.error(`${p.name}: retention failed: ${String(error)}`);
        }
      }
    }
  }

  /** Lets every writer finish and flush, then closes every file; waits for removals under way. */
  async closeAll(): Promise<void> {
    const partitions = [...this.topics.values()].flatMap((t) => [...served(t)]);
    await Promise.all([...partitions.map((p) => p.close()), ...this.removals.values()]);
  }
}

/** A topic's open partitions, skipping the ids another broker serves. */
function* served(entry: TopicEntry): Iterable<Partition> {
  for (const p of entry.partitions) if (p !== undefined) yield p;
}
