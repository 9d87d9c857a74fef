// Not the package's index: that loads the etcd client, which a single node never uses.
import { REPLICAS_MAX } from '@booblik/cluster/values';
import {
  ErrorCode,
  REPLICATION_DEFAULT,
  Revision,
  type TopicChange,
  type TopicSpec,
  topicNameProblem,
  topicSpecProblem,
} from '@booblik/protocol';
import { parseStoreUrl, StoreUrlError } from '@booblik/store';
import { dirNameProblem } from '../dir-names.js';
import { compressionProblem } from '../persister/compression.js';
import { minInSyncProblem } from '../replication/min-in-sync.js';

/** The changes to make, all checked; upserts as applied (defaults stay sentinels), revision still unset. */
export interface ApplyPlan {
  upserts: TopicSpec[];
  deletes: string[];
  /** The deletes that also purge the topic's store (APPLY v2's op 3). */
  purges: string[];
  /** Topics created with a store: the store is asked whether it answers before anything changes. */
  newStores: { index: number; name: string; storeUrl: string }[];
}

export type ApplyRefusal =
  | { code: typeof ErrorCode.INVALID_ARGUMENT; index: number; message: string }
  | {
      code: typeof ErrorCode.REVISION_MISMATCH;
      index: number;
      topic: string;
      expectedRevision: number;
      actualRevision: number;
    };

/**
 * Checks every change against the current specs, in order, and returns the plan or the first
 * refusal: the spec's fields, the topic named once, the expected revision, then what may change here
 * (partitions only grow, directory names the data directory can hold; one node has no replicas).
 */
export function planApply(
  current: ReadonlyMap<string, TopicSpec>,
  changes: readonly TopicChange[],
  where: {
    cluster: boolean;
    /** The longest directory name the data directory takes (dir-names.ts); unchecked when unset. */
    dirNameBytesMax?: number;
  } = { cluster: false },
): ApplyPlan | ApplyRefusal {
  const plan: ApplyPlan = { upserts: [], deletes: [], purges: [], newStores: [] };
  const named = new Set<string>();
  for (const [index, change] of changes.entries()) {
    const at = `changes[${index}]`;
    const invalid = (message: string): ApplyRefusal => ({
      code: ErrorCode.INVALID_ARGUMENT,
      index,
      message: `${at}.${message}`,
    });
    const name = change.op === 'upsert' ? change.spec.name : change.name;
    if (change.op === 'upsert') {
      const problem = topicSpecProblem(change.spec);
      if (problem !== null) return invalid(problem);
    } else {
      const problem = topicNameProblem(name);
      if (problem !== null) return invalid(`name: ${JSON.stringify(name.slice(0, 60))} ${problem}`);
      if (change.expectedRevision < Revision.ANY) {
        return invalid(`expectedRevision: ${change.expectedRevision}, expected -1 (any), 0 or a revision`);
      }
    }
    if (named.has(name)) return invalid(`name: ${name} is changed twice in one APPLY, expected once`);
    named.add(name);

    const existing = current.get(name);
    const actualRevision = existing?.revision ?? 0;
    const expectedRevision = change.op === 'upsert' ? change.spec.revision : change.expectedRevision;
    if (expectedRevision !== Revision.ANY && expectedRevision !== actualRevision) {
      return { code: ErrorCode.REVISION_MISMATCH, index, topic: name, expectedRevision, actualRevision };
    }

    if (change.op === 'delete') {
      if (existing !== undefined) plan.deletes.push(name);
      if (existing !== undefined && change.purgeStore === true) plan.purges.push(name);
      continue;
    }
    const spec = { ...change.spec, labels: { ...change.spec.labels } };
    if (where.dirNameBytesMax !== undefined) {
      const problem = dirNameProblem(name, spec.partitions, where.dirNameBytesMax);
      if (problem !== null) return invalid(problem);
    }
    if (existing !== undefined && spec.partitions < existing.partitions) {
      return invalid(
        `partitions: ${spec.partitions}, expected >= ${existing.partitions} (partitions may grow, never shrink)`,
      );
    }
    const replicationProblem = where.cluster
      ? clusterReplicationProblem(spec, existing)
      : spec.replication !== 1 && spec.replication !== REPLICATION_DEFAULT
        ? `replication: ${spec.replication}, expected 1 on a single broker`
        : null;
    if (replicationProblem !== null) return invalid(replicationProblem);
    const minProblem = minInSyncProblem(spec);
    if (minProblem !== null) return invalid(minProblem);
    const storeProblem = storeUrlProblem(spec, existing);
    if (storeProblem !== null) return invalid(storeProblem);
    if (existing === undefined && spec.storeUrl !== '') {
      plan.newStores.push({ index, name, storeUrl: spec.storeUrl });
    }
    plan.upserts.push(spec);
  }
  return plan;
}

/** In a cluster: 1..5 copies (0, the cluster's default), set when the topic is created. */
function clusterReplicationProblem(spec: TopicSpec, existing: TopicSpec | undefined): string | null {
  if (spec.replication !== REPLICATION_DEFAULT && (spec.replication < 1 || spec.replication > REPLICAS_MAX)) {
    return `replication: ${spec.replication}, expected 1..${REPLICAS_MAX} (0: the cluster's booblik.default.replication)`;
  }
  if (existing !== undefined && existing.replication !== spec.replication) {
    return `replication: ${spec.replication}, expected ${existing.replication} (a topic's replication is set when it is created)`;
  }
  return null;
}

export function isRefusal(result: ApplyPlan | ApplyRefusal): result is ApplyRefusal {
  return 'code' in result;
}

/** Why a spec's store cannot be used, or null: a URL the stores refuse, or a change of store. */
function storeUrlProblem(spec: TopicSpec, existing: TopicSpec | undefined): string | null {
  if (existing !== undefined && existing.storeUrl !== spec.storeUrl) {
    return `storeUrl: ${JSON.stringify(spec.storeUrl.slice(0, 80))}, expected ${JSON.stringify(existing.storeUrl)} (a topic's store is set when it is created)`;
  }
  if (spec.storeUrl !== '') {
    try {
      parseStoreUrl(spec.storeUrl);
    } catch (error) {
      if (error instanceof StoreUrlError) return `storeUrl: ${error.message}`;
      throw error;
    }
  }
  return compressionProblem(spec);
}
