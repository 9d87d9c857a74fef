import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Filesystem type of the mount serving `dir` (as `stat -f` reports it). */
export function fsTypeOf(dir: string): string {
  try {
    return execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * A fresh directory for benchmark data on a real disk: $BENCH_DATA_DIR, else the system temp dir,
 * else ./.bench-data. Never tmpfs: a broker measured on memory measures nothing about disks.
 */
export function benchDataDir(prefix: string): string {
  let root = process.env.BENCH_DATA_DIR ?? os.tmpdir();
  if (!process.env.BENCH_DATA_DIR && /tmpfs|ramfs/.test(fsTypeOf(root))) root = path.resolve('.bench-data');
  fs.mkdirSync(root, { recursive: true });
  const type = fsTypeOf(root);
  if (/tmpfs|ramfs/.test(type)) {
    throw new Error(
      `benchmark data root ${root} is on ${type}; set BENCH_DATA_DIR to a directory on a real disk`,
    );
  }
  return fs.mkdtempSync(path.join(root, prefix));
}
