import { EventEmitter } from 'node:events';
import type { TopicSpec } from '@booblik/protocol';
import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import { RevisionWaitTimeoutError } from './errors.js';
import { clusterError } from './etcd-client.js';
import { Keyspace, type ParsedKey } from './keyspace.js';
import { decodeAssignment, decodeMember, decodeOwner, decodeSpec, type MemberInfo } from './values.js';

/** A request's minimum revision is usually reached in milliseconds; past this it gets a retriable error. */
export const DEFAULT_REVISION_WAIT_MS = 5000;
/** After etcd refused a resync, try again this often while it is down. */
const RESYNC_RETRY_MS = 250;

export interface MemberEntry extends MemberInfo {
  /** The member key's create revision: the oldest member is the natural allocator leader. */
  createRevision: number;
  /** The etcd lease the key lives under (decimal). */
  leaseId: string;
}

export interface AssignmentEntry {
  topic: string;
  partition: number;
  member: string;
  slot: number;
  createRevision: number;
}

export interface OwnerEntry {
  /** The primary. */
  member: string;
  replicas: readonly string[];
  isr: readonly string[];
  epoch: number;
  /** Tells one incarnation of a partition from another of a topic deleted and created again. */
  createRevision: number;
  /** A move compares it: two moves at once cannot both win. */
  modRevision: number;
}

export interface KeyspaceCopyOptions {
  cluster: string;
  /** Told about every key under the prefix whose value this version cannot read (it is left out). */
  onProblem?: (key: string, problem: string) => void;
}

type CopyEvents = {
  /** The copy changed; the argument is its new revision. */
  change: [number];
  /** The watch lost etcd (the copy keeps serving what it has) or got it back. */
  connection: [boolean];
};

/**
 * An in-memory copy of one cluster's keyspace (members, specs, assignments) that follows etcd's
 * watch: read whole at one revision, then changed by the watch's events from the next revision on,
 * so every read of it is a consistent state of etcd at `revision`. Reads never wait on etcd. While
 * etcd is unreachable the copy keeps its last state; the watch resumes from the copy's revision
 * when etcd is back (or, if etcd compacted that history meanwhile, the copy is read whole again).
 */
export class KeyspaceCopy extends EventEmitter<CopyEvents> {
  readonly keyspace: Keyspace;
  private currentRevision = 0;
  private readonly memberMap = new Map<string, MemberEntry>();
  private readonly specMap = new Map<string, TopicSpec>();
  /** `<topic>/<partition>` -> member -> assignment. */
  private readonly assignmentMap = new Map<string, Map<string, AssignmentEntry>>();
  /** `<topic>/<partition>` -> the owning member's id and the owner key's create revision. */
  private readonly ownerMap = new Map<string, OwnerEntry>();
  /** User name -> its value as stored (the broker parses and checks it: credentials are its business). */
  private readonly userMap = new Map<string, string>();
  /** Topic -> the mod revision of its purge marker. */
  private readonly purgeMap = new Map<string, number>();
  /** Topic -> the revision its spec was deleted at, as the watch saw it (not known after a resync). */
  private readonly specDeletedAt = new Map<string, number>();
  private watcher: Watcher | null = null;
  private watching = false;
  private closed = false;
  private readonly waiters = new Set<{
    revision: number;
    resolve: () => void;
    reject: (error: Error) => void;
  }>();

  private constructor(
    private readonly client: Etcd3,
    private readonly options: KeyspaceCopyOptions,
  ) {
    super();
    this.keyspace = new Keyspace(options.cluster);
  }

  /** Reads the keyspace and starts following it; rejects (ClusterUnavailableError) if etcd cannot be read. */
  static async start(client: Etcd3, options: KeyspaceCopyOptions): Promise<KeyspaceCopy> {
    const copy = new KeyspaceCopy(client, options);
    await copy.sync();
    return copy;
  }

  /** The etcd revision the copy reflects. */
  get revision(): number {
    return this.currentRevision;
  }

  /** Whether the watch is attached to etcd now (false: the copy serves its last state). */
  get connected(): boolean {
    return this.watching;
  }

  get members(): ReadonlyMap<string, MemberEntry> {
    return this.memberMap;
  }

  get specs(): ReadonlyMap<string, TopicSpec> {
    return this.specMap;
  }

  /** SCRAM users, by name: each value as stored. */
  get users(): ReadonlyMap<string, string> {
    return this.userMap;
  }

  /** The assignments of one partition, by member. */
  assignmentsOf(topic: string, partition: number): readonly AssignmentEntry[] {
    return [...(this.assignmentMap.get(`${topic}/${partition}`)?.values() ?? [])];
  }

  /** The member whose data the partition is, if it was ever assigned. */
  ownerOf(topic: string, partition: number): OwnerEntry | undefined {
    return this.ownerMap.get(`${topic}/${partition}`);
  }

  /** Every owner record: `<topic>/<partition>` -> owner. */
  get owners(): ReadonlyMap<string, OwnerEntry> {
    return this.ownerMap;
  }

  /**
   * Whether the topic is deleted and its deletion asked for its store's history to go too: the
   * purge marker was put in the transaction that deleted the spec (a marker from an earlier
   * deletion of the name does not count). False when the copy did not see the deletion itself
   * (read whole again after it), so a purge is never made on a guess.
   */
  purgeRequested(topic: string): boolean {
    if (this.specMap.has(topic)) return false;
    const deletedAt = this.specDeletedAt.get(topic);
    return deletedAt !== undefined && this.purgeMap.get(topic) === deletedAt;
  }

  /** Every assignment, in no particular order. */
  *assignments(): IterableIterator<AssignmentEntry> {
    for (const byMember of this.assignmentMap.values()) yield* byMember.values();
  }

  /**
   * Resolves once the copy reflects `revision` (a request's minimum: the revision an APPLY
   * returned); rejects with RevisionWaitTimeoutError after `timeoutMs`.
   */
  waitForRevision(revision: number, timeoutMs = DEFAULT_REVISION_WAIT_MS): Promise<void> {
    if (this.currentRevision >= revision) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('the keyspace copy is closed'));
    return new Promise((resolve, reject) => {
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new RevisionWaitTimeoutError(revision, this.currentRevision, timeoutMs));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Stops following etcd; waits still pending are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters) waiter.reject(new Error('the keyspace copy was closed'));
    this.waiters.clear();
    const watcher = this.watcher;
    this.watcher = null;
    if (watcher !== null) await watcher.cancel();
  }

  /** Reads the whole keyspace at one revision, replaces the copy with it, and watches from there. */
  private async sync(): Promise<void> {
    let response: Awaited<ReturnType<ReturnType<Etcd3['getAll']>['exec']>>;
    try {
      response = await this.client.getAll().prefix(this.keyspace.prefix).exec();
    } catch (error) {
      throw clusterError(error, `reading cluster ${this.keyspace.cluster}`);
    }
    if (this.closed) return;
    this.memberMap.clear();
    this.specMap.clear();
    this.assignmentMap.clear();
    this.ownerMap.clear();
    this.purgeMap.clear();
    this.userMap.clear();
    this.specDeletedAt.clear();
    for (const kv of response.kvs) this.put(kv);
    this.advance(Number(response.header.revision));
    this.watch();
  }

  /** Resyncs until etcd answers (after a compaction cancelled the watch). */
  private resync(): void {
    if (this.closed) return;
    this.sync().catch(() => setTimeout(() => this.resync(), RESYNC_RETRY_MS).unref());
  }

  private watch(): void {
    const watcher = this.client
      .watch()
      .prefix(this.keyspace.prefix)
      .startRevision(String(this.currentRevision + 1))
      .watcher();
    this.watcher = watcher;
    watcher.on('connected', () => {
      // The client moves its resume point to the revision in the create answer, before the events
      // from our start revision up to it have arrived; a disconnect then would skip them. Resume
      // from what the copy has actually applied.
      watcher.request.start_revision = String(this.currentRevision + 1);
      this.setWatching(true);
    });
    watcher.on('disconnected', () => this.setWatching(false));
    watcher.on('data', (response: IWatchResponse) => this.onWatchResponse(response));
    watcher.on('error', () => {
      // The watch was cancelled by etcd (its start revision compacted away): read everything again.
      this.setWatching(false);
      if (this.watcher === watcher) this.watcher = null;
      this.resync();
    });
  }

  private onWatchResponse(response: IWatchResponse): void {
    if (this.closed) return;
    for (const event of response.events) {
      if (event.type === 'Put') this.put(event.kv);
      else {
        const key = event.kv.key.toString();
        const parsed = this.keyspace.parse(key);
        // A delete event's mod revision is the deletion's: a purge marker put with it matches it.
        if (parsed?.kind === 'spec') this.specDeletedAt.set(parsed.topic, Number(event.kv.mod_revision));
        this.delete(key);
      }
    }
    this.advance(Number(response.header.revision));
  }

  private advance(revision: number): void {
    if (revision <= this.currentRevision) return;
    this.currentRevision = revision;
    for (const waiter of [...this.waiters]) {
      if (waiter.revision <= revision) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
    this.emit('change', revision);
  }

  private setWatching(watching: boolean): void {
    if (this.watching === watching) return;
    this.watching = watching;
    this.emit('connection', watching);
  }

  private put(kv: IKeyValue): void {
    const key = kv.key.toString();
    const parsed = this.keyspace.parse(key);
    if (parsed === null) return;
    // A value that became unreadable drops the old one: serving a stale spec would be worse.
    this.delete(key);
    const problem = this.store(parsed, kv);
    if (problem !== null) this.options.onProblem?.(key, problem);
  }

  /** Puts a key's value into the copy; returns why it cannot be read instead, or null. */
  private store(parsed: ParsedKey, kv: IKeyValue): string | null {
    if (parsed.kind === 'member') {
      const decoded = decodeMember(kv.value);
      if ('problem' in decoded) return decoded.problem;
      if (decoded.value.id !== parsed.member) return `id: ${decoded.value.id}, expected ${parsed.member}`;
      this.memberMap.set(parsed.member, {
        ...decoded.value,
        createRevision: Number(kv.create_revision),
        leaseId: kv.lease,
      });
      return null;
    }
    if (parsed.kind === 'spec') {
      const decoded = decodeSpec(kv.value, Number(kv.mod_revision));
      if ('problem' in decoded) return decoded.problem;
      if (decoded.value.name !== parsed.topic) return `name: ${decoded.value.name}, expected ${parsed.topic}`;
      this.specMap.set(parsed.topic, decoded.value);
      this.specDeletedAt.delete(parsed.topic);
      return null;
    }
    if (parsed.kind === 'user') {
      this.userMap.set(parsed.name, kv.value.toString('utf8'));
      return null;
    }
    if (parsed.kind === 'purge') {
      // The value carries nothing yet; the key's mod revision is what ties it to a deletion.
      this.purgeMap.set(parsed.topic, Number(kv.mod_revision));
      return null;
    }
    if (parsed.kind === 'owner') {
      const decoded = decodeOwner(kv.value);
      if ('problem' in decoded) return decoded.problem;
      this.ownerMap.set(`${parsed.topic}/${parsed.partition}`, {
        ...decoded.value,
        createRevision: Number(kv.create_revision),
        modRevision: Number(kv.mod_revision),
      });
      return null;
    }
    const decoded = decodeAssignment(kv.value);
    if ('problem' in decoded) return decoded.problem;
    const partitionKey = `${parsed.topic}/${parsed.partition}`;
    const byMember = this.assignmentMap.get(partitionKey) ?? new Map<string, AssignmentEntry>();
    this.assignmentMap.set(partitionKey, byMember);
    byMember.set(parsed.member, {
      topic: parsed.topic,
      partition: parsed.partition,
      member: parsed.member,
      slot: decoded.value.slot,
      createRevision: Number(kv.create_revision),
    });
    return null;
  }

  private delete(key: string): void {
    const parsed = this.keyspace.parse(key);
    if (parsed === null) return;
    if (parsed.kind === 'member') this.memberMap.delete(parsed.member);
    else if (parsed.kind === 'spec') this.specMap.delete(parsed.topic);
    else if (parsed.kind === 'owner') this.ownerMap.delete(`${parsed.topic}/${parsed.partition}`);
    else if (parsed.kind === 'purge') this.purgeMap.delete(parsed.topic);
    else if (parsed.kind === 'user') this.userMap.delete(parsed.name);
    else {
      const partitionKey = `${parsed.topic}/${parsed.partition}`;
      const byMember = this.assignmentMap.get(partitionKey);
      byMember?.delete(parsed.member);
      if (byMember?.size === 0) this.assignmentMap.delete(partitionKey);
    }
  }
}
