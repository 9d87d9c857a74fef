import fs from 'node:fs';
import path from 'node:path';
import { type KeyspaceCopy, SerialRuns } from '@booblik/cluster';
import { type LogConfig, type Logger, replaceFileDurably } from '@booblik/log';
import { isReadOnly, type TopicSpec } from '@booblik/protocol';
import type { PartitionRegistry } from '../partitions.js';
import { logPurge } from '../persister/persister-service.js';

/** `<data dir>/cluster-owned.json`: the owner record revision of each partition opened here. */
const OWNED_FILE = 'cluster-owned.json';

/**
 * Keeps the partitions open here equal to those the cluster says this broker owns: opens what it
 * holds a copy of (as primary or replica), reconfigures what changed, removes what was deleted. A partition directory left by an
 * earlier topic of the same name (deleted while this broker was away) is told apart by the owner
 * record's revision kept in `cluster-owned.json`, and removed before the new one opens empty.
 */
export class OwnedPartitions {
  private readonly runs: SerialRuns;
  private stopped = false;
  private readonly openRevisions = new Map<string, number>();
  private readonly specRevisions = new Map<string, number>();
  private readonly file: string;

  constructor(
    private readonly copy: KeyspaceCopy,
    private readonly registry: PartitionRegistry,
    private readonly selfId: string,
    dataDir: string,
    private readonly logConfigOf: (spec: TopicSpec) => LogConfig,
    private readonly logger: Logger,
    private readonly changed: () => void,
  ) {
    this.file = path.join(dataDir, OWNED_FILE);
    try {
      const kept = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Record<string, number>;
      for (const [key, revision] of Object.entries(kept)) this.openRevisions.set(key, revision);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    this.runs = new SerialRuns(
      () => this.run(),
      (error) => this.logger.error(`cluster: opening owned partitions failed: ${String(error)}`),
    );
    copy.on('change', () => void this.runs.request());
  }

  private readonly openedListeners: (() => void)[] = [];

  /** Told after each pass that opened partitions (replication gives them their roles). */
  onOpened(listener: () => void): void {
    this.openedListeners.push(listener);
  }

  /** Brings the open partitions in line with the copy; resolves when done (at startup). */
  sync(): Promise<void> {
    return this.runs.request();
  }

  stop(): void {
    this.stopped = true;
    this.runs.stop();
  }

  private async run(): Promise<void> {
    const specs = this.copy.specs;
    for (const name of this.registry.topicNames()) {
      if (!specs.has(name)) {
        const purgeStore = this.copy.purgeRequested(name);
        this.logger.info(
          `cluster: topic ${name} deleted${purgeStore ? ' purging its store' : ''}; removing its partitions here`,
        );
        void this.registry
          .removeTopic(name, { purgeStore })
          .then((purges) => logPurge(this.logger, name, purges));
        this.specRevisions.delete(name);
        this.changed();
      }
    }
    for (const name of this.registry.topicNames()) {
      for (const p of this.registry.partitionsOf(name) ?? []) {
        if (p === undefined) continue;
        const owner = this.copy.ownerOf(name, p.id);
        if (owner === undefined || owner.replicas.includes(this.selfId)) continue;
        // Moved to other brokers by an operator (`booblik partitions move`): its records stay behind.
        this.logger.warn(`${p.name}: moved to ${owner.replicas.join(', ')}; removing it here`);
        this.openRevisions.delete(`${name}/${p.id}`);
        this.keep();
        void this.registry.removePartition(name, p.id);
        this.changed();
      }
    }
    // What to open, its owner revision kept (durably, once for all) before any file of it is made.
    const opening: { topic: string; id: number; spec: TopicSpec; replicated: boolean }[] = [];
    let kept = false;
    for (const [key, owner] of this.copy.owners) {
      if (!owner.replicas.includes(this.selfId)) continue;
      const slash = key.lastIndexOf('/');
      const topic = key.slice(0, slash);
      const id = Number(key.slice(slash + 1));
      const spec = specs.get(topic);
      if (spec === undefined || id >= spec.partitions) continue;
      if (this.registry.get(topic, id) !== undefined) continue;
      const before = this.openRevisions.get(key);
      if (before !== owner.createRevision) {
        if (before !== undefined) this.registry.removeLeftovers(topic, id);
        this.openRevisions.set(key, owner.createRevision);
        kept = true;
      }
      opening.push({ topic, id, spec, replicated: owner.replicas.length > 1 });
    }
    if (kept) this.keep();
    for (const { topic, id, spec, replicated } of opening) {
      if (this.stopped) return;
      const r = await this.registry.openPartition(
        topic,
        id,
        this.logConfigOf(spec),
        isReadOnly(spec),
        replicated,
      );
      if (r !== null) {
        this.logger.info(
          `partition ${r.topic}-${r.partition}: offsets ${r.logStartOffset}..${r.logEndOffset}, ${r.segments} segment(s), ${r.bytes} B, opened in ${r.recoveryMs.toFixed(1)} ms`,
        );
        this.changed();
      } else if (this.registry.failureOf(topic, id) !== undefined) {
        this.changed(); // it could not be opened: answered STORAGE_ERROR from now on, not NO_PRIMARY
      }
    }
    if (opening.length > 0) for (const listener of this.openedListeners) listener();
    for (const name of this.registry.topicNames()) {
      const spec = specs.get(name);
      if (spec === undefined || this.specRevisions.get(name) === spec.revision) continue;
      this.specRevisions.set(name, spec.revision);
      this.registry.reconfigure(name, this.logConfigOf(spec));
      this.registry.setReadOnly(name, isReadOnly(spec));
    }
  }

  /** Rewrites `cluster-owned.json` durably (rare: once per pass that gives this broker partitions). */
  private keep(): void {
    replaceFileDurably(this.file, `${JSON.stringify(Object.fromEntries(this.openRevisions))}\n`);
  }
}
