import type { LogConfig, Logger } from '@booblik/log';
import {
  type ApplyRequest,
  type Clock,
  ErrorCode,
  isReadOnly,
  RETENTION_DEFAULT,
  SEGMENT_BYTES_DEFAULT,
  systemClock,
  type TopicSpec,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { RevisionNotReachedError } from '../errors.js';
import type { PartitionRegistry, PartitionReport } from '../partitions.js';
import { logPurge } from '../persister/persister-service.js';
import { type ApplyPlan, isRefusal, planApply } from './plan-apply.js';
import type { SpecStore } from './spec-store.js';
import { newStoreRefusal } from './store-check.js';
import type { ApplyOutcome, TopicTable } from './topic-table.js';

/**
 * The topic table: every spec and the store's revision, changed only by APPLY (one at a time) and
 * by startup. Each change is made durable in the spec store first, then served: partitions opened,
 * grown, reconfigured or removed, then watchers woken.
 */
export class TopicService implements TopicTable {
  private specs = new Map<string, TopicSpec>();
  private sorted: TopicSpec[] | null = null;
  private currentRevision = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly watcherSet = new Set<(revision: number, routesOnly: boolean) => void>();

  constructor(
    private readonly store: SpecStore,
    private readonly registry: PartitionRegistry,
    private readonly brokerLogConfig: Readonly<LogConfig>,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Watches waiting for the next change (held LISTs). */
  get watchers(): number {
    return this.watcherSet.size;
  }

  get revision(): number {
    return this.currentRevision;
  }

  get(name: string): TopicSpec | undefined {
    return this.specs.get(name);
  }

  /** Every spec, sorted by name (LIST answers in this order). */
  list(): readonly TopicSpec[] {
    this.sorted ??= [...this.specs.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return this.sorted;
  }

  /** Calls `listener` after every change with the new revision (one node: routes never change alone). */
  onChange(listener: (revision: number, routesOnly: boolean) => void): () => void {
    this.watcherSet.add(listener);
    return () => this.watcherSet.delete(listener);
  }

  /** The log settings of a topic's partitions: the broker's, with what its spec sets. */
  logConfigOf(spec: TopicSpec): LogConfig {
    const c = this.brokerLogConfig;
    return {
      ...c,
      retentionBytes: spec.retentionBytes === RETENTION_DEFAULT ? c.retentionBytes : spec.retentionBytes,
      retentionMs: spec.retentionMs === RETENTION_DEFAULT ? c.retentionMs : spec.retentionMs,
      segmentBytesMax: spec.segmentBytes === SEGMENT_BYTES_DEFAULT ? c.segmentBytesMax : spec.segmentBytes,
    };
  }

  /**
   * Loads the specs, creates those of `configured` that are missing (never deleting one), and opens
   * every partition. A data directory without a spec file (from before topic specs) keeps its data:
   * the configured topics adopt their partitions' files.
   */
  async start(configured: readonly { name: string; partitions: number }[]): Promise<PartitionReport[]> {
    const stored = await this.store.load();
    const adopting = stored === null;
    this.currentRevision = stored?.revision ?? 0;
    for (const spec of stored?.specs ?? []) this.specs.set(spec.name, spec);
    const missing = configured.filter((t) => !this.specs.has(t.name));
    for (const t of configured) {
      const stored = this.specs.get(t.name);
      if (stored !== undefined && stored.partitions !== t.partitions) {
        this.logger.warn(
          `booblik.topics names ${t.name}:${t.partitions}, its stored spec has ${stored.partitions} partition(s) (revision ${stored.revision}): the stored spec is served; change it with booblik topics apply`,
        );
      }
    }
    if (missing.length > 0) {
      const revision = this.currentRevision + 1;
      const next = new Map(this.specs);
      for (const t of missing) next.set(t.name, topicSpecWithDefaults({ ...t, revision }));
      await this.store.replace(this.currentRevision, { revision, specs: [...next.values()] });
      this.specs = next;
      this.currentRevision = revision;
      this.logger.info(
        `topics: created ${missing.map((t) => `${t.name}:${t.partitions}`).join(', ')} from booblik.topics (revision ${revision})`,
      );
    }
    const created = new Set(adopting ? [] : missing.map((t) => t.name));
    const reports: PartitionReport[] = [];
    for (const spec of this.list()) {
      if (spec.storeUrl !== '' && !created.has(spec.name)) {
        // Its history may be in the store: opened asynchronously, the manifest read first.
        reports.push(
          ...(await this.registry.growTopic(spec.name, spec.partitions, this.logConfigOf(spec), false)),
        );
      } else if (created.has(spec.name)) {
        reports.push(
          ...(await this.registry.growTopic(spec.name, spec.partitions, this.logConfigOf(spec), true)),
        );
      } else {
        reports.push(...this.registry.addTopic(spec, this.logConfigOf(spec)));
      }
      this.registry.setReadOnly(spec.name, isReadOnly(spec));
    }
    return reports;
  }

  reach(revision: number, timeoutMs: number): Promise<void> {
    if (this.currentRevision >= revision) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        unsubscribe();
        reject(
          new RevisionNotReachedError(
            `revision ${revision} not reached in ${timeoutMs} ms (at ${this.currentRevision})`,
          ),
        );
      }, timeoutMs);
      const unsubscribe = this.onChange((now) => {
        if (now < revision) return;
        this.clock.clearTimeout(timer);
        unsubscribe();
        resolve();
      });
    });
  }

  /** Resolves once no APPLY is under way (shutdown waits for it before closing partitions). */
  settled(): Promise<void> {
    return this.queue.then(() => {});
  }

  /** Applies every change or none, one APPLY at a time. */
  apply(req: ApplyRequest): Promise<ApplyOutcome> {
    const outcome = this.queue.then(() => this.applyNow(req));
    this.queue = outcome.catch(() => {});
    return outcome;
  }

  private async applyNow(req: ApplyRequest): Promise<ApplyOutcome> {
    const plan = planApply(this.specs, req.changes, {
      cluster: false,
      dirNameBytesMax: this.registry.dirNameBytesMax,
    });
    if (isRefusal(plan)) return plan;
    const storeRefused = await newStoreRefusal(plan);
    if (storeRefused !== null) return storeRefused;
    if (req.dryRun || (plan.upserts.length === 0 && plan.deletes.length === 0)) {
      return { code: ErrorCode.NONE, revision: this.currentRevision };
    }
    const revision = this.currentRevision + 1;
    const next = new Map(this.specs);
    for (const name of plan.deletes) next.delete(name);
    for (const spec of plan.upserts) next.set(spec.name, { ...spec, revision });
    try {
      await this.store.replace(this.currentRevision, { revision, specs: [...next.values()] });
    } catch (error) {
      this.logger.error(`topics: APPLY not stored, nothing changed: ${String(error)}`);
      return { code: ErrorCode.STORAGE_ERROR, message: String(error) };
    }
    const before = this.specs;
    this.specs = next;
    this.sorted = null;
    this.currentRevision = revision;

    for (const name of plan.deletes) {
      const purgeStore = plan.purges.includes(name);
      const spec = before.get(name)!;
      // Every partition of the topic is here: each one with a store should have been purged.
      const expected =
        purgeStore && spec.storeUrl !== ''
          ? { partitions: spec.partitions, storeUrl: spec.storeUrl }
          : undefined;
      void this.registry
        .removeTopic(name, { purgeStore })
        .then((purges) => logPurge(this.logger, name, purges, expected));
    }
    for (const spec of plan.upserts) {
      const existed = before.has(spec.name);
      const config = this.logConfigOf(spec);
      if (existed) this.registry.reconfigure(spec.name, config);
      try {
        await this.registry.growTopic(spec.name, spec.partitions, config, true);
      } catch (error) {
        this.logger.error(`topic ${spec.name}: opening partitions failed: ${String(error)}`);
      }
      this.registry.setReadOnly(spec.name, isReadOnly(spec));
    }
    this.logger.info(`topics: revision ${revision}: ${describeChanges(plan, before)}`);
    for (const w of [...this.watcherSet]) w(revision, false);
    return { code: ErrorCode.NONE, revision };
  }
}

/** One line, however large the APPLY: the first few changes, then a count. */
function describeChanges(
  { upserts, deletes, purges }: ApplyPlan,
  before: ReadonlyMap<string, TopicSpec>,
): string {
  const all = [
    ...upserts.map((s) => `${before.has(s.name) ? 'changed' : 'created'} ${s.name}:${s.partitions}`),
    ...deletes.map((n) => (purges.includes(n) ? `deleted ${n} (purging its store)` : `deleted ${n}`)),
  ];
  const shown = all.slice(0, 5).join(', ');
  return all.length > 5 ? `${shown} and ${all.length - 5} more` : shown;
}
