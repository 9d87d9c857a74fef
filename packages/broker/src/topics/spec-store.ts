import type { TopicSpec } from '@booblik/protocol';

/** Every topic spec and the store's revision: what one commit replaces as a whole. */
export interface SpecStoreState {
  revision: number;
  /** Concrete values (no APPLY defaults); each spec's `revision` is that of its last change. */
  specs: TopicSpec[];
}

/**
 * Where topic specs live. On one node a file in the data directory (FileSpecStore); in the cluster,
 * etcd, whose transaction compares the revision the same way `replace` is asked to.
 */
export interface SpecStore {
  /** The stored state, or null when nothing was ever stored (a data directory from before specs). */
  load(): Promise<SpecStoreState | null>;
  /**
   * Replaces the whole state, durably, if the stored revision is still `expectedRevision`; rejects
   * otherwise (and on a disk error), leaving the old state.
   */
  replace(expectedRevision: number, next: SpecStoreState): Promise<void>;
}

/** The store was changed by someone else between read and write. */
export class SpecStoreConflictError extends Error {
  override name = 'SpecStoreConflictError';
}

/** The store's bytes are not a state this broker can read: startup stops rather than lose topics. */
export class SpecStoreCorruptError extends Error {
  override name = 'SpecStoreCorruptError';
}
