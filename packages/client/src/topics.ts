/**
 * Topics at runtime from the client's side: the changes an APPLY takes, what a LIST answers, and
 * the conversion from the friendly input shapes to the wire's.
 */
import {
  type ListedTopic,
  Revision,
  type TopicChange,
  TopicFlag,
  type TopicSpec,
  topicSpecProblem,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { InvalidArgumentError } from './errors.js';

export type { ListedTopic, TopicSpec } from '@booblik/protocol';

/**
 * A spec as a caller writes it: name and partitions, the rest optional (the broker's defaults).
 * `revision` is the one expected: 0 must not exist, -1 (the default) any, N must be at N.
 */
export interface TopicSpecInput {
  name: string;
  partitions: number;
  labels?: Record<string, string>;
  retentionBytes?: number;
  retentionMs?: number;
  segmentBytes?: number;
  readOnly?: boolean;
  replication?: number;
  storeUrl?: string;
  revision?: number;
}

export type TopicChangeInput =
  | { op: 'upsert'; spec: TopicSpecInput }
  /**
   * `purgeStore`: also remove the topic's history from its fragment store (APPLY v2; a broker
   * without it refuses the whole APPLY with UNSUPPORTED_VERSION and deletes nothing). Without it the
   * store's objects stay.
   */
  | { op: 'delete'; name: string; expectedRevision?: number; purgeStore?: boolean };

export interface ApplyOptions {
  /** Check everything on the broker, change nothing; the answer is the current revision. */
  dryRun?: boolean;
}

export interface ApplyResult {
  /** The spec store's revision after the APPLY: each upserted spec now carries it. */
  revision: number;
}

export interface TopicListing {
  /** The spec store's revision this listing is at. */
  revision: number;
  topics: ListedTopic[];
}

export interface WatchOptions {
  /** Ends the watch: the iterator finishes (no error) and its connection closes. */
  signal?: AbortSignal;
  /** How long each held LIST may wait before asking again (default 30 s, at most 60 s). */
  maxWaitMs?: number;
}

/** The wire spec for an input, checked here first so a bad field fails before anything is sent. */
export function toWireSpec(input: TopicSpecInput): TopicSpec {
  const { readOnly, ...rest } = input;
  const spec = topicSpecWithDefaults({ ...rest, labels: { ...(input.labels ?? {}) } });
  if (readOnly) spec.flags |= TopicFlag.READ_ONLY;
  const problem = topicSpecProblem(spec);
  if (problem !== null) throw new InvalidArgumentError(`topic ${input.name}: ${problem}`);
  return spec;
}

export function toWireChange(change: TopicChangeInput): TopicChange {
  if (change.op === 'upsert') return { op: 'upsert', spec: toWireSpec(change.spec) };
  if (change.op === 'delete') {
    const expectedRevision = change.expectedRevision ?? Revision.ANY;
    return change.purgeStore === true
      ? { op: 'delete', name: change.name, expectedRevision, purgeStore: true }
      : { op: 'delete', name: change.name, expectedRevision };
  }
  throw new InvalidArgumentError(
    `op: ${String((change as { op: unknown }).op)}, expected "upsert" or "delete"`,
  );
}
