import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ObjectExistsError,
  ObjectNotFoundError,
  type StoreError,
  StoreRefusedError,
  StoreUnavailableError,
} from './errors.js';
import { checkKey, checkPrefix, checkRange, compareKeys } from './keys.js';
import type { ObjectInfo, ObjectStore, PutOptions, PutResult } from './object-store.js';

/** Directory entries read per system call while listing (fs.opendir's buffer). */
export const DEFAULT_LIST_PAGE_SIZE = 256;

/** Names of in-progress puts start with this; listings never show them (keys cannot start with '.'). */
const TEMP_PREFIX = '.put-';

/**
 * System errors that a person must fix: permissions, a read-only mount, a file where a folder must
 * be (EEXIST from mkdir, ENOTDIR). Outside an ifAbsent put, EEXIST has no other source here.
 */
const REFUSED_CODES = new Set([
  'EEXIST',
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EISDIR',
  'ENAMETOOLONG',
  'EINVAL',
  'ELOOP',
]);

export interface FileStoreOptions {
  /** Directory entries read per call while listing. */
  listPageSize?: number;
}

/**
 * Objects as files under a directory that must already exist (any mounted file system): key
 * `a/b/c` is the file `root/a/b/c`. A put writes a temporary file beside the target, fsyncs it,
 * renames it over the target (link(2) for `ifAbsent`) and fsyncs the directory, so a reader or a
 * restart after a crash finds the whole old object or the whole new one. Folders left empty by
 * deletes stay (removing them would race with a put into them).
 */
export class FileStore implements ObjectStore {
  readonly url: string;
  private readonly listPageSize: number;

  constructor(
    readonly root: string,
    options: FileStoreOptions = {},
  ) {
    this.url = pathToFileURL(root).href;
    this.listPageSize = options.listPageSize ?? DEFAULT_LIST_PAGE_SIZE;
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    return this.publish(key, options, (temp) => fs.promises.writeFile(temp, body, { flag: 'wx' }));
  }

  async putFile(key: string, file: string, options: PutOptions = {}): Promise<PutResult> {
    await readableSource(this.url, key, file);
    // copyFile uses copy_file_range (or a reflink) where it can: no bytes through this process.
    return await this.publish(key, options, (temp) =>
      fs.promises.copyFile(file, temp, fs.constants.COPYFILE_EXCL),
    );
  }

  /** Writes a temporary file with `write`, fsyncs it, then renames (or links) it to the key. */
  private async publish(
    key: string,
    options: PutOptions,
    write: (temp: string) => Promise<void>,
  ): Promise<PutResult> {
    checkKey(key);
    const target = path.join(this.root, key);
    const dir = path.dirname(target);
    // Not named after the target: a long key segment would make the name too long.
    const temp = path.join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    let published = false;
    try {
      await this.checkRoot('put', key);
      await mkdirDurable(this.root, dir);
      await write(temp);
      const file = await fs.promises.open(temp, 'r+');
      let stat: fs.BigIntStats;
      try {
        await file.sync();
        stat = await file.stat({ bigint: true });
      } finally {
        await file.close();
      }
      if (options.ifAbsent) {
        // link(2) fails with EEXIST when the name is taken: the check and the publish are one step.
        await fs.promises.link(temp, target);
        published = true;
        await fs.promises.unlink(temp);
      } else {
        await fs.promises.rename(temp, target);
        published = true;
      }
      await fsyncDir(dir);
      return { etag: etagOf(stat) };
    } catch (error) {
      if (!published) await fs.promises.rm(temp, { force: true }).catch(() => {});
      if (options.ifAbsent && !published && (error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new ObjectExistsError(this.url, 'put', key, 'an object already has this key (ifAbsent)', {
          cause: error,
        });
      }
      // ENOENT here: the root went away since the check (an unmount): say that, not a path.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') await this.checkRoot('put', key);
      throw this.failure(error, 'put', key);
    }
  }

  async get(key: string, start?: number, end?: number): Promise<Buffer> {
    checkKey(key);
    const range = checkRange(key, start, end);
    try {
      // An open file is the object as it was when opened: a put renaming over it does not change it.
      const file = await fs.promises.open(path.join(this.root, key), 'r');
      try {
        const size = Number((await file.stat()).size);
        const from = Math.min(range.start, size);
        const length = Math.min(range.end, size) - from;
        const bytes = Buffer.allocUnsafe(length);
        let done = 0;
        while (done < length) {
          const { bytesRead } = await file.read(bytes, done, length - done, from + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return bytes.subarray(0, done);
      } finally {
        await file.close();
      }
    } catch (error) {
      throw await this.readFailure(error, 'get', key);
    }
  }

  async head(key: string): Promise<ObjectInfo> {
    checkKey(key);
    try {
      const stat = await fs.promises.stat(path.join(this.root, key), { bigint: true });
      if (!stat.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOENT' });
      return infoOf(key, stat);
    } catch (error) {
      throw await this.readFailure(error, 'head', key);
    }
  }

  async *list(prefix = ''): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    await this.checkRoot('list', prefix);
    // The folder the prefix points into, and the start of the names to take there.
    const cut = prefix.lastIndexOf('/') + 1;
    const found: ObjectInfo[] = [];
    try {
      await this.walk(prefix.slice(0, cut), prefix.slice(cut), found);
    } catch (error) {
      throw this.failure(error, 'list', prefix);
    }
    found.sort((a, b) => compareKeys(a.key, b.key));
    yield* found;
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const target = path.join(this.root, key);
    try {
      await this.checkRoot('delete', key);
      await fs.promises.unlink(target);
      await fsyncDir(path.dirname(target));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw this.failure(error, 'delete', key);
    }
  }

  close(): void {}

  /** Collects the objects under `root/dirKey` whose names start with `namePrefix`. */
  private async walk(dirKey: string, namePrefix: string, found: ObjectInfo[]): Promise<void> {
    let dir: fs.Dir;
    try {
      dir = await fs.promises.opendir(path.join(this.root, dirKey), { bufferSize: this.listPageSize });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return; // nothing under this prefix
      throw error;
    }
    for await (const entry of dir) {
      if (entry.name.startsWith('.') || !entry.name.startsWith(namePrefix)) continue;
      const key = `${dirKey}${entry.name}`;
      if (entry.isDirectory()) await this.walk(`${key}/`, '', found);
      else if (entry.isFile()) {
        try {
          found.push(infoOf(key, await fs.promises.stat(path.join(this.root, key), { bigint: true })));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // deleted meanwhile
        }
      }
    }
  }

  /** A missing root is an unmounted or not yet created store: unavailable, never created here. */
  private async checkRoot(operation: string, key: string): Promise<void> {
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(this.root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new StoreUnavailableError(
          this.url,
          operation,
          key,
          `the directory ${this.root} does not exist`,
          {
            cause: error,
          },
        );
      }
      throw this.failure(error, operation, key);
    }
    if (!stat.isDirectory()) {
      throw new StoreRefusedError(this.url, operation, key, `${this.root} is not a directory`);
    }
  }

  /** ENOENT on a read: no such object, unless the whole root is missing. */
  private async readFailure(error: unknown, operation: string, key: string): Promise<Error> {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') {
      await this.checkRoot(operation, key);
      return new ObjectNotFoundError(this.url, operation, key, 'no such object', { cause: error });
    }
    return this.failure(error, operation, key);
  }

  private failure(error: unknown, operation: string, key: string): Error {
    if (error instanceof Error && 'retriable' in error) return error as StoreError;
    const code = (error as NodeJS.ErrnoException).code;
    const detail = (error as Error).message;
    // Anything else (EIO, ENOSPC, ESTALE, EMFILE, ...) may pass: report it, let the caller retry.
    if (code !== undefined && REFUSED_CODES.has(code)) {
      return new StoreRefusedError(this.url, operation, key, detail, { cause: error });
    }
    return new StoreUnavailableError(this.url, operation, key, detail, { cause: error });
  }
}

/** The size of a file to upload; an unreadable one is the caller's problem, not the store's. */
export async function readableSource(storeUrl: string, key: string, file: string): Promise<number> {
  try {
    const handle = await fs.promises.open(file, 'r');
    try {
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new StoreRefusedError(storeUrl, 'put', key, `cannot read ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Inode, size and modification time: a replaced object is a new inode, so its etag differs. */
function etagOf(stat: fs.BigIntStats): string {
  return `${stat.ino.toString(16)}-${stat.size.toString(16)}-${stat.mtimeNs.toString(16)}`;
}

function infoOf(key: string, stat: fs.BigIntStats): ObjectInfo {
  return { key, size: Number(stat.size), etag: etagOf(stat), modifiedMs: Number(stat.mtimeMs) };
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * `mkdir -p` of `dir` below `root` whose result survives a power cut: the parent of every folder
 * created here is fsynced, and the parent of `dir` even when `dir` already existed (a put that
 * crashed between its mkdir and that fsync left the name in memory only). The root itself is never
 * created: a root gone since the put checked it (an unmounted disk) fails the put with ENOENT rather
 * than growing a new, empty store where the old one was.
 */
async function mkdirDurable(root: string, dir: string): Promise<void> {
  if (dir === root) return;
  const parents = new Set([path.dirname(dir)]);
  let d = root;
  for (const part of path.relative(root, dir).split(path.sep)) {
    const parent = d;
    d = path.join(d, part);
    try {
      await fs.promises.mkdir(d);
      parents.add(parent);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  for (const parent of parents) await fsyncDir(parent);
}
