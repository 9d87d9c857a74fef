import fs from 'node:fs';
import path from 'node:path';

/** fsync a directory, so a segment file created or removed in it survives a crash. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * fsyncDir in libuv's thread pool. A directory's fsync commits the file system's journal, which it
 * shares with every other writer of that file system: it took 0.2 to 50 ms here, and longer while
 * other processes synced, so the write path never waits for one on the event loop.
 */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * `mkdir -p` whose result survives a power cut: an fsync of a file makes its bytes durable but not
 * its name, nor the names of the directories above it, so the parent of every directory created
 * here is synced. The parent of `dir` is synced even when `dir` already existed: a run that crashed
 * between its mkdir and that sync left the name in memory only.
 */
export function mkdirDurable(dir: string): void {
  const target = path.resolve(dir);
  const firstCreated = fs.mkdirSync(target, { recursive: true });
  const parents = [path.dirname(target)];
  if (firstCreated !== undefined) {
    // Every ancestor of `target` as long as `firstCreated` (or longer) was created here too.
    for (let d = path.dirname(target); d.length >= firstCreated.length; d = path.dirname(d)) {
      parents.push(path.dirname(d));
    }
  }
  for (const parent of parents) fsyncDir(parent);
}

/**
 * Replaces a small file so a crash leaves the old contents or the new, never a mix: a temporary file
 * written and fsynced, renamed over the old one, and the directory fsynced so the rename is durable.
 */
export function replaceFileDurably(file: string, contents: string): void {
  const temp = `${file}.tmp`;
  const fd = fs.openSync(temp, 'w');
  try {
    fs.writeFileSync(fd, contents);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  fsyncDir(path.dirname(file));
}

/** pread up to `length` bytes into buf[0...]; fewer when the file ends first. Resolves with the count. */
export function preadInto(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const step = (got: number) => {
      if (got === length) return resolve(got);
      fs.read(fd, buf, got, length - got, position + got, (err, n) => {
        if (err) return reject(err);
        if (n === 0) return resolve(got);
        step(got + n);
      });
    };
    step(0);
  });
}

export function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}
