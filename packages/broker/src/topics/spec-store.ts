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
