import { Revision, type TopicChange, type TopicSpec, topicNameProblem } from '@booblik/protocol';
import type { Etcd3, IKeyValue, ITxnResponse } from 'etcd3';
import { SpecChangeInvalidError, SpecRevisionMismatchError } from './errors.js';
import { clusterError, clusterWriteError } from './etcd-client.js';
import { Keyspace } from './keyspace.js';
import { decodeSpec, encodeSpec } from './values.js';

/** etcd's default `--max-txn-ops`: an APPLY is one transaction, with one compare and one op per change. */
export const DEFAULT_TXN_OPS_MAX = 128;

export interface ClusterSpecState {
  /** etcd's revision when the specs were read. */
  revision: number;
  /** Each spec's `revision` is its key's mod revision: the revision of its last change. */
  specs: TopicSpec[];
  /** Keys whose value is not a spec this version can read: kept, reported, never served. */
  unreadable: { key: string; problem: string }[];
}

/**
 * What the cluster needs from a spec store: the broker's SpecStore semantics, per topic. `apply`
 * makes every change or none, each compared with the revision it expects (`spec.revision` of an
 * upsert, `expectedRevision` of a delete: 0 must not exist, -1 any, N the topic's revision N), and
 * resolves to the revision of the change, which a client can hand to any broker as its minimum.
 */
export interface ClusterSpecStore {
  load(): Promise<ClusterSpecState>;
  apply(changes: readonly TopicChange[]): Promise<number>;
}

export interface EtcdSpecStoreOptions {
  cluster: string;
  /** The etcd server's `--max-txn-ops`; larger APPLYs are refused before the round trip. */
  txnOpsMax?: number;
}

/** Topic specs under `/<cluster>/specs/<topic>`, changed by one etcd transaction per APPLY. */
export class EtcdSpecStore implements ClusterSpecStore {
  readonly keyspace: Keyspace;
  private readonly txnOpsMax: number;

  constructor(
    private readonly client: Etcd3,
    options: EtcdSpecStoreOptions,
  ) {
    this.keyspace = new Keyspace(options.cluster);
    this.txnOpsMax = options.txnOpsMax ?? DEFAULT_TXN_OPS_MAX;
  }

  async load(): Promise<ClusterSpecState> {
    let response: Awaited<ReturnType<ReturnType<Etcd3['getAll']>['exec']>>;
    try {
      response = await this.client.getAll().prefix(this.keyspace.specsPrefix).exec();
    } catch (error) {
      throw clusterError(error, 'reading topic specs');
    }
    const state: ClusterSpecState = { revision: Number(response.header.revision), specs: [], unreadable: [] };
    for (const kv of response.kvs) {
      const key = kv.key.toString();
      const decoded = decodeSpec(kv.value, Number(kv.mod_revision));
      if ('problem' in decoded) state.unreadable.push({ key, problem: decoded.problem });
      else state.specs.push(decoded.value);
    }
    return state;
  }

  async apply(changes: readonly TopicChange[]): Promise<number> {
    // A delete purging its store puts a marker too: two operations.
    const ops = changes.length + changes.filter(isPurge).length;
    if (ops > this.txnOpsMax) {
      throw new SpecChangeInvalidError(
        `changes: ${changes.length} (${ops} operations: a delete purging its store is two), expected at most ${this.txnOpsMax} operations in one APPLY (the etcd server's --max-txn-ops)`,
      );
    }
    const keys: string[] = [];
    const expected: number[] = [];
    const named = new Set<string>();
    for (const [index, change] of changes.entries()) {
      const name = change.op === 'upsert' ? change.spec.name : change.name;
      const problem = topicNameProblem(name);
      if (problem !== null) {
        throw new SpecChangeInvalidError(
          `changes[${index}].name: ${JSON.stringify(name.slice(0, 60))} ${problem}`,
        );
      }
      if (named.has(name)) {
        throw new SpecChangeInvalidError(`changes[${index}].name: ${name} is changed twice, expected once`);
      }
      named.add(name);
      const revision = change.op === 'upsert' ? change.spec.revision : change.expectedRevision;
      if (!Number.isSafeInteger(revision) || revision < Revision.ANY) {
        throw new SpecChangeInvalidError(
          `changes[${index}].revision: ${revision}, expected -1 (any), 0 (must not exist) or a revision`,
        );
      }
      keys.push(this.keyspace.specKey(name));
      expected.push(revision);
    }

    if (changes.length === 0) return (await this.load()).revision;
    // The client starts a transaction with a compare; this one always holds (a mod revision is never below 0).
    let txn = this.client.if(keys[0]!, 'Mod', '>', -1);
    for (const [i, key] of keys.entries()) {
      const revision = expected[i]!;
      if (revision === Revision.ANY) continue;
      // A key that does not exist has mod revision 0, so "must not exist" is the same compare.
      txn = txn.and(key, 'Mod', '==', revision);
    }
    const writes = changes.flatMap((change, i) =>
      change.op === 'upsert'
        ? [this.client.put(keys[i]!).value(encodeSpec(change.spec))]
        : isPurge(change)
          ? [
              this.client.delete().key(keys[i]!),
              this.client.put(this.keyspace.purgeKey(change.name)).value('{}'),
            ]
          : [this.client.delete().key(keys[i]!)],
    );
    const reads = keys.map((key) => this.client.get(key));
    let result: ITxnResponse;
    try {
      result = await txn
        .then(...writes)
        .else(...reads)
        .commit();
    } catch (error) {
      throw clusterWriteError(error, 'applying topic changes');
    }
    if (result.succeeded) return Number(result.header.revision);

    // Which change failed its compare: the first whose topic is not at the revision it expected.
    for (const [i, response] of result.responses.entries()) {
      const kv: IKeyValue | undefined = response.response_range?.kvs[0];
      const actual = kv === undefined ? 0 : Number(kv.mod_revision);
      const want = expected[i]!;
      if (want !== Revision.ANY && want !== actual) {
        throw new SpecRevisionMismatchError(i, nameOf(changes[i]!), want, actual);
      }
    }
    // Unreachable unless etcd's answer contradicts its own compare.
    throw new Error(
      'etcd refused the APPLY transaction, but every compared topic is at its expected revision',
    );
  }
}

function isPurge(change: TopicChange): boolean {
  return change.op === 'delete' && change.purgeStore === true;
}

function nameOf(change: TopicChange): string {
  return change.op === 'upsert' ? change.spec.name : change.name;
}
