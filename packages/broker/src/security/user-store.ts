/**
 * The SCRAM users of one node: `<dataDir>/users.json`, readable by the broker's user alone, replaced
 * atomically (a temporary file written and fsynced, renamed, the directory fsynced) so a crash leaves
 * the old set or the new one. It holds what verifies a proof (salt, iterations, StoredKey,
 * ServerKey), never a password.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir, mkdirDurable } from '@booblik/log';
import { AuthMechanism, ErrorCode, type ScramCredential, type UserListing } from '@booblik/protocol';
import { UserChangeError, UserStoreCorruptError } from './errors.js';
import { decodeUser, encodeUser } from './user-codec.js';

export const USERS_FILE_NAME = 'users.json';
const FORMAT = 1;

/** Where users live: this file on one node, etcd in a cluster; changes are rare and small. */
export interface UserStore {
  get(name: string): ScramCredential | undefined;
  list(): UserListing[];
  readonly size: number;
  /** Resolves once a login on this broker sees the change. */
  upsert(name: string, credential: ScramCredential): Promise<void>;
  /** False when there was no such user. */
  remove(name: string): Promise<boolean>;
  /** Adds the user unless any user exists (the bootstrap user); false when one did. */
  addFirst(name: string, credential: ScramCredential): Promise<boolean>;
}

export class FileUserStore implements UserStore {
  readonly file: string;
  private users = new Map<string, ScramCredential>();

  constructor(
    private readonly dataDir: string,
    /** The directory's fsync after the rename (tests make it fail). */
    private readonly syncDir: (dir: string) => void = fsyncDir,
  ) {
    this.file = path.join(dataDir, USERS_FILE_NAME);
  }

  /** Reads the file; none is no user. A file that does not parse stops the start: auth must not open by accident. */
  load(): void {
    fs.rmSync(`${this.file}.tmp`, { force: true });
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const user of parseUsersFile(text, this.file)) this.users.set(user.name, user.credential);
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
    this.replace(new Map(this.users).set(name, credential));
  }

  async addFirst(name: string, credential: ScramCredential): Promise<boolean> {
    if (this.users.size > 0) return false;
    await this.upsert(name, credential);
    return true;
  }

  async remove(name: string): Promise<boolean> {
    if (!this.users.has(name)) return false;
    const next = new Map(this.users);
    next.delete(name);
    this.replace(next);
    return true;
  }

  /**
   * Writes `users` as the file, then serves them. A failure before the rename changed nothing (the
   * caller refuses); once renamed the new file is what a restart reads, unless a crash comes before
   * the directory's fsync: a failed fsync then leaves the outcome unknown (OUTCOME_UNKNOWN), and
   * the new users are served, as the file on disk holds them.
   */
  private replace(users: Map<string, ScramCredential>): void {
    const stored = [...users.entries()].map(([name, c]) => encodeUser(name, c));
    mkdirDurable(this.dataDir);
    const temp = `${this.file}.tmp`;
    try {
      const fd = fs.openSync(temp, 'w', 0o600);
      try {
        fs.writeFileSync(fd, `${JSON.stringify({ format: FORMAT, users: stored })}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(temp, this.file);
    } catch (error) {
      try {
        fs.rmSync(temp, { force: true });
      } catch {
        // Left for the next start's load(), which removes it; the write's own error is the one to say.
      }
      throw error;
    }
    this.users = users;
    try {
      this.syncDir(this.dataDir);
    } catch (error) {
      throw new UserChangeError(
        ErrorCode.OUTCOME_UNKNOWN,
        `${this.file} was replaced but its directory's fsync failed (${(error as Error).message}): the change may not survive a crash`,
        { cause: error },
      );
    }
  }
}

export function parseUsersFile(text: string, where: string): { name: string; credential: ScramCredential }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UserStoreCorruptError(`${where}: not JSON (${(error as Error).message})`);
  }
  const f = parsed as { format?: unknown; users?: unknown };
  if (typeof f !== 'object' || f === null || f.format !== FORMAT || !Array.isArray(f.users))
    throw new UserStoreCorruptError(`${where}: expected format ${FORMAT} and a list of users`);
  const out: { name: string; credential: ScramCredential }[] = [];
  for (const [i, raw] of (f.users as unknown[]).entries()) {
    const decoded = decodeUser(raw);
    if ('problem' in decoded) throw new UserStoreCorruptError(`${where}: users[${i}]: ${decoded.problem}`);
    if (out.some((u) => u.name === decoded.name))
      throw new UserStoreCorruptError(`${where}: user ${decoded.name} twice`);
    out.push(decoded);
  }
  return out;
}

/** Users by name, as USERS lists them. */
export function listingOf(users: ReadonlyMap<string, { iterations: number }>): UserListing[] {
  return [...users.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, c]) => ({ name, mechanism: AuthMechanism.SCRAM_SHA_256, iterations: c.iterations }));
}
