import type { EpochEntry, Fragment, Logger, Partition, PersistCandidate } from '@booblik/log';
import { type Clock, systemClock, type TimerHandle, unrefTimer } from '@booblik/protocol';
import type { ObjectStore } from '@booblik/store';
import { fileChecksum } from './checksum.js';
import { loadManifest, type Manifest, readManifest, saveManifest } from './manifest.js';
import { fragmentKey, manifestKey, parseFragmentKey, partitionPrefix } from './object-names.js';
import type { StoreHealth } from './store-health.js';

/** First wait after a failed pass; doubled per failure up to the cap, reset by a success. */
export const RETRY_FIRST_MS = 100;
/** A store down for long is still tried every 10 s, so it is found again soon after it returns. */
export const RETRY_MAX_MS = 10_000;
/**
 * Segments uploaded at once by one partition: a backlog (a burst of writes closed several) drains in
 * parallel PUTs and one manifest write per batch. Four keeps a 512 MiB-segment batch's memory to the
 * streams' buffers (4 MiB each on S3) and a store's connections few.
 */
export const UPLOADS_AT_ONCE = 4;
/**
 * A replica reads the primary's manifest when a closed segment of its own waits to be found there;
 * while the primary has not uploaded it (just closed, a store down, a primary behind), the next look
 * waits longer, doubling up to this, so a replica costs the store a few requests per segment. A
 * segment newly closed here brings the next look back to a second: its upload is on its way, and a
 * wait doubled while the primary was behind would keep the replica's disk full long after.
 */
export const FOLLOW_WAIT_MAX_MS = 30_000;
/** The first wait after a look that found nothing new: about the time a primary's upload takes. */
const PERSIST_RECHECK_MS = 1000;

export interface PersisterStats {
  uploads: number;
  uploadedBytes: number;
  storeRequests: number;
  failures: number;
  deletions: number;
}

export type PersisterEvent =
  | { kind: 'uploaded'; fragment: Fragment }
  | { kind: 'deleted'; keys: string[] }
  | { kind: 'failed'; error: unknown };

/**
 * Uploads one partition's closed segments to its store, once each, then records them in the
 * manifest; deletes the objects retention expired. One pass at a time; a failed pass is retried
 * with backoff, and nothing it did not finish is marked done (a segment not in the manifest stays
 * unpersisted on disk, and is uploaded again under the same name). On a replica (another broker
 * uploads) it only learns from the primary's manifest which segments are persisted (`follow`).
 */
export class PartitionPersister {
  private manifest: Manifest | undefined;
  /** The manifest's history does not join the local log (read late, after the disk started anew). */
  private conflict: string | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private retryMs = 0;
  private retryAt = 0;
  private retryTimer: TimerHandle | undefined;
  private closed = false;
  /** Requests this persister sent to the store. */
  private requests = 0;
  /** Expired fragments whose objects are still to be deleted. */
  private readonly toDelete: Fragment[] = [];
  /** As a replica: when to look at the primary's manifest next (the clock's time), and the wait after that. */
  private followAt = 0;
  private followWaitMs = 0;
  /** As a replica: the end of the newest closed segment at the last look (made at followAt - followWaitMs). */
  private followedEnd = 0;
  /** Segments (by base offset) whose bytes differ from the store's: reported once each. */
  private readonly differing = new Set<number>();
  private readonly listeners = new Set<(event: PersisterEvent) => void>();

  constructor(
    readonly partition: Partition,
    private readonly store: ObjectStore,
    private readonly health: StoreHealth,
    private readonly stats: PersisterStats,
    private readonly logger: Logger,
    manifest: Manifest | undefined,
    /** False while another broker (the partition's primary) uploads it. */
    private readonly uploadsHere: () => boolean = () => true,
    private readonly clock: Clock = systemClock,
  ) {
    this.manifest = manifest;
  }

  /** Segments closed but not yet uploaded: the backlog. */
  get backlog(): number {
    return this.partition.persistCandidates().length;
  }

  get problem(): string | undefined {
    return this.conflict;
  }

  /** The store's URL, as logged. */
  get storeUrl(): string {
    return this.store.url;
  }

  on(listener: (event: PersisterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Asks for a pass (now, or when the current backoff ends). */
  kick(): void {
    if (this.closed) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    const wait = this.retryAt - this.clock.now();
    if (wait > 0) {
      if (this.retryTimer === undefined) {
        this.retryTimer = this.clock.setTimeout(() => {
          this.retryTimer = undefined;
          this.kick();
        }, wait);
        unrefTimer(this.retryTimer);
      }
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves once no pass is under way (those asked for meanwhile included). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /** Stops after the pass under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.clock.clearTimeout(this.retryTimer);
    await this.running;
  }

  /**
   * The topic was deleted asking for its history to go too: stops after the pass under way (so no
   * upload lands after this), then deletes every object under the partition's prefix, the manifest
   * first: a topic created again under the name then starts empty even if the rest fails. Resolves
   * with the number of objects deleted; rejects with the store's error.
   */
  async purge(): Promise<number> {
    await this.close();
    const { topic, id } = this.partition;
    const manifest = manifestKey(topic, id);
    const keys: string[] = [];
    this.countRequest();
    for await (const info of this.store.list(partitionPrefix(topic, id))) keys.push(info.key);
    keys.sort((a, b) => (a === manifest ? -1 : b === manifest ? 1 : 0));
    for (const key of keys) await this.deleteObject(key);
    return keys.length;
  }

  private async pass(): Promise<void> {
    const requestsBefore = this.requests;
    try {
      if (this.uploadsHere()) await this.persist();
      else await this.follow();
      this.retryMs = 0;
      this.retryAt = 0;
      // Only a pass that asked the store something can say it answers.
      if (this.requests > requestsBefore) this.health.succeeded(this.store.url);
    } catch (error) {
      if (this.closed) return; // a partition closed or deleted under its upload: not the store's fault
      this.stats.failures++;
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs === 0 ? RETRY_FIRST_MS : this.retryMs * 2);
      this.retryAt = this.clock.now() + this.retryMs;
      this.health.failed(this.store.url, error);
      this.emit({ kind: 'failed', error });
      this.again = true; // retried once the backoff ends
    }
  }

  private async persist(): Promise<void> {
    const manifest = await this.loadedManifest();
    if (manifest === undefined) return;
    this.toDelete.push(...this.partition.takeExpiredFragments());
    if (this.toDelete.length > 0) await this.deleteExpired(manifest);
    // An epoch begun here (a restore on an empty disk) is in the store before anything else: the
    // next restore must begin a later one, whatever happens to this disk.
    if (!sameEpochs(manifest.epochs ?? [], this.partition.epochs.entries)) await this.save(manifest);
    const candidates = this.partition.persistCandidates();
    let uploaded = 0;
    for (let i = 0; i < candidates.length && !this.closed; i += UPLOADS_AT_ONCE) {
      uploaded += await this.uploadBatch(manifest, candidates.slice(i, i + UPLOADS_AT_ONCE));
    }
    // Segments that closed while these uploaded go at once, not at the next periodic check: under a
    // steady write a 512 MiB segment closes every few seconds, and a second's wait each time adds up.
    if (uploaded > 0) this.again = true;
  }

  /**
   * As a replica (its primary uploads): finds in the primary's manifest the closed segments of this
   * log that the store holds, with the same offsets and the same bytes (the checksum in the object's
   * name), and marks them persisted, so local retention drops them here as on the primary. A segment
   * the store does not hold, or holds with other bytes, stays. Never writes to the store.
   */
  private async follow(): Promise<void> {
    // The primary's uploads move the manifest on: read it again before this broker uploads.
    this.manifest = undefined;
    // Kept for the day this broker becomes primary: the primary deletes them, unless it dies first.
    this.toDelete.push(...this.partition.takeExpiredFragments());
    const candidates = this.partition.persistCandidates();
    if (candidates.length === 0) return;
    const newestEnd = candidates.at(-1)!.endOffset;
    const closedSince = newestEnd > this.followedEnd;
    const lookedAt = this.followAt - this.followWaitMs;
    const lookAt = closedSince ? Math.min(this.followAt, lookedAt + PERSIST_RECHECK_MS) : this.followAt;
    if (this.clock.now() < lookAt) return;
    this.followedEnd = newestEnd;
    const { topic, id } = this.partition;
    this.countRequest();
    const manifest = await readManifest(this.store, topic, id);
    let marked = 0;
    for (const c of candidates) {
      if (this.closed) return;
      const f = manifest?.fragments.find((x) => x.baseOffset === c.baseOffset && x.endOffset === c.endOffset);
      // Retention drops the oldest first: nothing after a segment that must stay could go anyway.
      if (f === undefined) break;
      const named = parseFragmentKey(f.key, partitionPrefix(topic, id));
      const sha256 = await fileChecksum(c.path);
      if (named === null || !sha256.startsWith(named.checksumHex)) {
        if (!this.differing.has(c.baseOffset)) {
          this.differing.add(c.baseOffset);
          this.logger.error(
            `${this.partition.name}: the local segment at ${c.baseOffset} differs from the store's ${f.key}; it is kept here`,
          );
        }
        break;
      }
      if (this.partition.markPersisted(f)) marked++;
    }
    this.followWaitMs =
      marked > 0
        ? 0
        : closedSince
          ? PERSIST_RECHECK_MS
          : Math.min(FOLLOW_WAIT_MAX_MS, Math.max(PERSIST_RECHECK_MS, this.followWaitMs * 2));
    this.followAt = this.clock.now() + this.followWaitMs;
    if (manifest !== null) {
      // Those the primary's manifest no longer lists are deleted already.
      const listed = new Set(manifest.fragments.map((f) => f.key));
      const pending = this.toDelete.splice(0).filter((f) => listed.has(f.key));
      this.toDelete.push(...pending);
    }
  }

  /** The manifest, read from the store if the partition opened without it. */
  private async loadedManifest(): Promise<Manifest | undefined> {
    if (this.conflict !== undefined) return undefined;
    if (this.manifest !== undefined) return this.manifest;
    const { topic, id } = this.partition;
    this.countRequest();
    const { manifest } = await loadManifest(this.store, topic, id, this.logger);
    const storeEnd = manifest.fragments.at(-1)?.endOffset ?? 0;
    if (
      storeEnd > this.partition.localStartOffset &&
      this.partition.logStartOffset === this.partition.localStartOffset
    ) {
      const overlapping = manifest.fragments.some(
        (f) => f.endOffset > this.partition.localStartOffset && !this.matchesLocal(f),
      );
      if (overlapping) {
        this.conflict = `the store's history (to offset ${storeEnd}) overlaps the local log (from ${this.partition.localStartOffset}) with other segments; nothing is uploaded: restart the broker with the store reachable to restore it`;
        this.logger.error(`${this.partition.name}: ${this.conflict}`);
        return undefined;
      }
    }
    this.manifest = manifest;
    return manifest;
  }

  private matchesLocal(f: Fragment): boolean {
    return this.partition
      .fragmentViews()
      .some((v) => v.baseOffset === f.baseOffset && v.endOffset === f.endOffset && v.location !== 'store');
  }

  /**
   * Uploads a few segments at once (a backlog drains faster than one PUT at a time), then records
   * them all in one manifest write. If any upload fails, none of the batch is recorded: the ones that
   * landed are sent again under the same names next time, replacing themselves.
   */
  private async uploadBatch(manifest: Manifest, batch: PersistCandidate[]): Promise<number> {
    const { topic, id } = this.partition;
    const uploaded = await Promise.all(
      batch.map(async (c): Promise<Fragment | null> => {
        const sha256 = await fileChecksum(c.path);
        const key = fragmentKey(topic, id, c.baseOffset, c.endOffset, sha256);
        const known = manifest.fragments.find((f) => f.key === key);
        if (known !== undefined) {
          // In the manifest already (listed there before a restart): the same bytes, nothing to send.
          this.partition.markPersisted(known);
          return null;
        }
        this.countRequest();
        // The store checks what arrives against the checksum the name is made of (S3 refuses a body
        // that differs), so the object holds the segment's bytes before any local copy may go.
        await this.store.putFile(key, c.path, { sha256 });
        return {
          key,
          baseOffset: c.baseOffset,
          endOffset: c.endOffset,
          sizeBytes: c.sizeBytes,
          lastWriteMs: c.lastWriteMs,
          persistedMs: Date.now(),
          index: c.index,
        };
      }),
    );
    const fragments = uploaded.filter((f): f is Fragment => f !== null);
    if (fragments.length === 0) return 0;
    // A fragment covering the same offsets (a segment recovery later cut) is replaced by the new one.
    const overlaps = (f: Fragment) =>
      fragments.some((n) => f.endOffset > n.baseOffset && f.baseOffset < n.endOffset);
    const replaced = manifest.fragments.filter(overlaps);
    const next = [...manifest.fragments.filter((f) => !overlaps(f)), ...fragments];
    next.sort((a, b) => a.baseOffset - b.baseOffset);
    const before = manifest.fragments;
    manifest.fragments = next;
    try {
      await this.save(manifest);
    } catch (error) {
      manifest.fragments = before;
      throw error;
    }
    for (const fragment of fragments) {
      this.partition.markPersisted(fragment);
      this.stats.uploads++;
      this.stats.uploadedBytes += fragment.sizeBytes;
      this.emit({ kind: 'uploaded', fragment });
    }
    for (const f of replaced) await this.deleteObject(f.key);
    return fragments.length;
  }

  /** The manifest first stops listing them, then their objects go: a listed object always exists. */
  private async deleteExpired(manifest: Manifest): Promise<void> {
    const keys = new Set(this.toDelete.map((f) => f.key));
    if (manifest.fragments.some((f) => keys.has(f.key))) {
      const before = manifest.fragments;
      manifest.fragments = before.filter((f) => !keys.has(f.key));
      try {
        await this.save(manifest);
      } catch (error) {
        manifest.fragments = before;
        throw error;
      }
    }
    while (this.toDelete.length > 0) {
      await this.deleteObject(this.toDelete[0]!.key);
      this.toDelete.shift();
    }
    this.emit({ kind: 'deleted', keys: [...keys] });
  }

  private async deleteObject(key: string): Promise<void> {
    this.countRequest();
    await this.store.delete(key);
    this.stats.deletions++;
  }

  /**
   * Replaces the manifest in the store, with what the partition knows now besides its fragments: its
   * epoch history and its high watermark (what a restore reports lost, should this disk be lost).
   */
  private async save(manifest: Manifest): Promise<void> {
    manifest.epochs = [...this.partition.epochs.entries];
    manifest.highWatermark = this.partition.highWatermark.value;
    this.countRequest();
    await saveManifest(this.store, manifest);
  }

  private countRequest(): void {
    this.requests++;
    this.stats.storeRequests++;
  }

  private emit(event: PersisterEvent): void {
    for (const l of [...this.listeners]) l(event);
  }
}

function sameEpochs(a: readonly EpochEntry[], b: readonly EpochEntry[]): boolean {
  return (
    a.length === b.length && a.every((e, i) => e.epoch === b[i]!.epoch && e.startOffset === b[i]!.startOffset)
  );
}
