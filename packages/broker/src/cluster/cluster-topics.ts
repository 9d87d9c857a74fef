import {
  ClusterOutcomeUnknownError,
  ClusterUnavailableError,
  type EtcdSpecStore,
  type KeyspaceCopy,
  SpecChangeInvalidError,
  SpecRevisionMismatchError,
} from '@booblik/cluster';
import type { Logger } from '@booblik/log';
import { type ApplyRequest, type Clock, ErrorCode, systemClock, type TopicSpec } from '@booblik/protocol';
import { RevisionNotReachedError } from '../errors.js';
import { isRefusal, planApply } from '../topics/plan-apply.js';
import { newStoreRefusal } from '../topics/store-check.js';
import type { ApplyOutcome, TopicTable } from '../topics/topic-table.js';
import type { ClusterRouting } from './cluster-routing.js';

/** How long an APPLY waits for the allocator to give its new partitions a primary before answering. */
const ASSIGNED_WAIT_MS = 5000;

/**
 * The topic table of a cluster broker: the specs of the watched copy (reads never wait on etcd),
 * changed by APPLY as one etcd transaction. An APPLY is answered once this broker's copy has the
 * change and the allocator has given every new partition a primary (or 5 s passed), with the
 * revision of that state: a client that hands it to any broker as its minimum can use the topic.
 */
export class ClusterTopics implements TopicTable {
  private sorted: TopicSpec[] | null = null;
  private readonly watcherSet = new Set<(revision: number, routesOnly: boolean) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  /** Waits (APPLY, MOVE) for a state of the copy and of the partitions open here. */
  private readonly checks = new Set<() => void>();

  constructor(
    private readonly copy: KeyspaceCopy,
    private readonly store: EtcdSpecStore,
    private readonly routing: ClusterRouting,
    private readonly logger: Logger,
    /**
     * This broker's data directory's limit: checked where the APPLY is taken. Another broker's file
     * system may take less; a partition it cannot open is reported there, not fatal.
     */
    private readonly dirNameBytesMax?: number,
    private readonly clock: Clock = systemClock,
  ) {
    copy.on('change', (revision) => {
      this.sorted = null;
      for (const w of [...this.watcherSet]) w(revision, false);
      this.checkWaits();
    });
  }

  /**
   * A partition opened or closed here, or began or stopped being served here (a new primary ready):
   * routes may have changed without etcd changing, so LIST watches look again.
   */
  localChanged(): void {
    this.checkWaits();
    for (const w of [...this.watcherSet]) w(this.copy.revision, true);
  }

  private checkWaits(): void {
    for (const check of [...this.checks]) check();
  }

  get revision(): number {
    return this.copy.revision;
  }

  get watchers(): number {
    return this.watcherSet.size;
  }

  get(name: string): TopicSpec | undefined {
    return this.copy.specs.get(name);
  }

  list(): readonly TopicSpec[] {
    this.sorted ??= [...this.copy.specs.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    return this.sorted;
  }

  onChange(listener: (revision: number, routesOnly: boolean) => void): () => void {
    this.watcherSet.add(listener);
    return () => this.watcherSet.delete(listener);
  }

  settled(): Promise<void> {
    return this.queue.then(() => {});
  }

  async reach(revision: number, timeoutMs: number): Promise<void> {
    try {
      await this.copy.waitForRevision(revision, timeoutMs);
    } catch (error) {
      throw new RevisionNotReachedError(String(error));
    }
  }

  apply(req: ApplyRequest): Promise<ApplyOutcome> {
    const outcome = this.queue.then(() => this.applyNow(req));
    this.queue = outcome.catch(() => {});
    return outcome;
  }

  private async applyNow(req: ApplyRequest): Promise<ApplyOutcome> {
    // Checked against the copy first for a precise refusal; etcd's compare is what decides.
    const plan = planApply(this.copy.specs, req.changes, {
      cluster: true,
      ...(this.dirNameBytesMax === undefined ? {} : { dirNameBytesMax: this.dirNameBytesMax }),
    });
    if (isRefusal(plan)) return plan;
    // Asked by this broker: the others reach the store the same way, or report it failing.
    const storeRefused = await newStoreRefusal(plan);
    if (storeRefused !== null) return storeRefused;
    if (req.dryRun || req.changes.length === 0) return { code: ErrorCode.NONE, revision: this.copy.revision };
    let revision: number;
    try {
      revision = await this.store.apply(req.changes);
    } catch (error) {
      if (error instanceof SpecRevisionMismatchError) {
        return {
          code: ErrorCode.REVISION_MISMATCH,
          index: error.index,
          topic: error.topic,
          expectedRevision: error.expectedRevision,
          actualRevision: error.actualRevision,
        };
      }
      if (error instanceof SpecChangeInvalidError) {
        return { code: ErrorCode.INVALID_ARGUMENT, index: -1, message: error.message };
      }
      if (error instanceof ClusterUnavailableError) {
        this.logger.warn(`topics: APPLY not applied: ${error.message}`);
        return { code: ErrorCode.CLUSTER_UNAVAILABLE, message: error.message };
      }
      if (error instanceof ClusterOutcomeUnknownError) {
        this.logger.warn(`topics: APPLY outcome unknown: ${error.message}`);
        return { code: ErrorCode.OUTCOME_UNKNOWN, message: error.message };
      }
      throw error;
    }
    try {
      await this.copy.waitForRevision(revision, ASSIGNED_WAIT_MS);
      await this.assigned(
        plan.upserts.map((s) => s.name),
        ASSIGNED_WAIT_MS,
      );
    } catch {
      // The change is made; its partitions show no primary until the allocator gets to them.
    }
    this.logger.info(
      `topics: revision ${revision}: ${plan.upserts.length} upsert(s), ${plan.deletes.length} delete(s)`,
    );
    return { code: ErrorCode.NONE, revision: Math.max(revision, this.copy.revision) };
  }

  /** Resolves once every partition of `topics` has a primary in the copy. */
  private assigned(topics: readonly string[], timeoutMs: number): Promise<boolean> {
    return this.until(
      () =>
        topics.every((name) => {
          const spec = this.copy.specs.get(name);
          if (spec === undefined) return true;
          for (let p = 0; p < spec.partitions; p++)
            if (this.routing.resolve(name, p).kind === 'none') return false;
          return true;
        }),
      timeoutMs,
    );
  }

  /**
   * Resolves true once `condition` holds (checked after each change of the copy and of the
   * partitions open here), false after `timeoutMs`.
   */
  until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.checks.delete(check);
        resolve(false);
      }, timeoutMs);
      const check = () => {
        if (!condition()) return;
        this.clock.clearTimeout(timer);
        this.checks.delete(check);
        resolve(true);
      };
      this.checks.add(check);
    });
  }
}
