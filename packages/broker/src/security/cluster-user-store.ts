/**
 * The SCRAM users of a cluster: in etcd, read from this broker's keyspace copy, so every broker
 * knows a user as soon as its copy reaches the write. A change is answered once this broker's copy
 * shows it (a login here right after sees it); a user removed through any broker has its live
 * connections here closed when the copy shows the removal.
 */
import {
  ClusterOutcomeUnknownError,
  ClusterUnavailableError,
  type KeyspaceCopy,
  RevisionWaitTimeoutError,
  type UserKeys,
} from '@booblik/cluster';
import type { Logger } from '@booblik/log';
import { ErrorCode, type ScramCredential, type UserListing } from '@booblik/protocol';
import { UserChangeError } from './errors.js';
import { decodeUser, encodeUser } from './user-codec.js';
import { listingOf, type UserStore } from './user-store.js';

export class ClusterUserStore implements UserStore {
  /** Parsed values by name; rebuilt from the copy when it changes. */
  private users = new Map<string, ScramCredential>();
  /** The stored value each user was parsed from. */
  private rawOf = new Map<string, string>();
  /** Values already logged as unreadable, so each is said once, not at every change of the copy. */
  private readonly refused = new Set<string>();

  constructor(
    private readonly copy: KeyspaceCopy,
    private readonly keys: UserKeys,
    private readonly logger: Logger,
    /** Told each user the copy no longer has. */
    private readonly removed: (name: string) => void,
  ) {
    this.reread();
    copy.on('change', () => this.reread());
  }

  get(name: string): ScramCredential | undefined {
    return this.users.get(name);
  }

  get size(): number {
    return this.users.size;
  }

  list(): UserListing[] {
    return listingOf(this.users);
  }

  async upsert(name: string, credential: ScramCredential): Promise<void> {
    await this.seen(await written(this.keys.put(name, JSON.stringify(encodeUser(name, credential)))));
  }

  async addFirst(name: string, credential: ScramCredential): Promise<boolean> {
    if (this.users.size > 0) return false;
    return written(this.keys.putIfAbsent(name, JSON.stringify(encodeUser(name, credential))));
  }

  async remove(name: string): Promise<boolean> {
    const revision = await written(this.keys.delete(name));
    if (revision === null) return false;
    await this.seen(revision);
    return true;
  }

  /** Waits for the copy to show a write that etcd took; a copy slow to follow does not undo it. */
  private async seen(revision: number): Promise<void> {
    try {
      await this.copy.waitForRevision(revision);
    } catch (error) {
      if (!(error instanceof RevisionWaitTimeoutError)) throw error;
      this.logger.warn(`cluster: a user change at revision ${revision} is not in this broker's copy yet`);
    }
  }

  private reread(): void {
    // The copy changes for every assignment and epoch; users rarely: a value seen before is not parsed again.
    const next = new Map<string, ScramCredential>();
    const nextRaw = new Map<string, string>();
    for (const [name, raw] of this.copy.users) {
      nextRaw.set(name, raw);
      const known = this.rawOf.get(name) === raw ? this.users.get(name) : undefined;
      const credential = known ?? this.decode(name, raw);
      if (credential !== undefined) next.set(name, credential);
    }
    const before = this.users;
    this.users = next;
    this.rawOf = nextRaw;
    for (const name of before.keys()) if (!next.has(name)) this.removed(name);
  }

  /** A value this broker cannot read is no user: it can never log in, rather than log in wrongly. */
  private decode(name: string, raw: string): ScramCredential | undefined {
    let decoded: ReturnType<typeof decodeUser>;
    try {
      decoded = decodeUser(JSON.parse(raw));
    } catch {
      decoded = { problem: 'not JSON' };
    }
    if (!('problem' in decoded) && decoded.name === name) return decoded.credential;
    if (!this.refused.has(raw)) {
      this.refused.add(raw);
      const why = 'problem' in decoded ? decoded.problem : 'another name inside';
      this.logger.warn(`cluster: user ${JSON.stringify(name)} ignored: ${why}`);
    }
    return undefined;
  }
}

/** etcd's refusals as the wire codes USERS answers: not reached (refused), or not answered (unknown). */
async function written<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ClusterUnavailableError)
      throw new UserChangeError(ErrorCode.CLUSTER_UNAVAILABLE, error.message, { cause: error });
    if (error instanceof ClusterOutcomeUnknownError)
      throw new UserChangeError(ErrorCode.OUTCOME_UNKNOWN, error.message, { cause: error });
    throw error;
  }
}
