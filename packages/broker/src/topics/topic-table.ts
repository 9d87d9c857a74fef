import type { ApplyRequest, ErrorCode, TopicSpec } from '@booblik/protocol';
import type { ApplyRefusal } from './plan-apply.js';

/** What an APPLY came to: the new revision, a refusal, or why the store could not take it. */
export type ApplyOutcome =
  | { code: typeof ErrorCode.NONE; revision: number }
  | ApplyRefusal
  | {
      code:
        | typeof ErrorCode.STORAGE_ERROR
        | typeof ErrorCode.CLUSTER_UNAVAILABLE
        | typeof ErrorCode.OUTCOME_UNKNOWN;
      message: string;
    };

/**
 * The topic specs the handlers read and APPLY changes: on one node the TopicService (a file in the
 * data directory), in a cluster the watched copy of etcd. Reads never wait on a store.
 */
export interface TopicTable {
  /** The store's revision the table reflects. */
  readonly revision: number;
  /** Held LIST watches. */
  readonly watchers: number;
  get(name: string): TopicSpec | undefined;
  /** Every spec, sorted by name. */
  list(): readonly TopicSpec[];
  /**
   * Calls `listener` after every change with the new revision, and with `routesOnly` when only
   * where partitions are served may have changed (no new revision); returns the unsubscribe function.
   */
  onChange(listener: (revision: number, routesOnly: boolean) => void): () => void;
  apply(req: ApplyRequest): Promise<ApplyOutcome>;
  /** Resolves once no APPLY is under way. */
  settled(): Promise<void>;
  /**
   * Resolves once the table reflects `revision` (a request's minimum); rejects with
   * RevisionNotReachedError after `timeoutMs`.
   */
  reach(revision: number, timeoutMs: number): Promise<void>;
}

/** How long a request may wait for its minimum revision before it is answered CLUSTER_UNAVAILABLE. */
export const MIN_REVISION_WAIT_MS = 5000;
