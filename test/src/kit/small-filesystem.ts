import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

export type FilesystemKind = 'tmpfs' | 'ext4';

function run(command: string, args: string[]): { ok: boolean; output: string } {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim();
  return { ok: r.status === 0, output };
}

/**
 * A filesystem of `sizeBytes`, mounted on a fresh directory for this test: a size-limited tmpfs, or
 * an ext4 image on a loop device (a real block filesystem, with its journal and delayed allocation).
 * Unmounted and removed when the test ends, passed or not. Returns null, with the reason, where the
 * machine does not let this process mount (mounting needs root, and a loop device for ext4).
 */
export function mountSmallFilesystem(
  t: TestContext,
  kind: FilesystemKind,
  sizeBytes: number,
): { dir: string } | { skip: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `booblik-${kind}-`));
  const dir = path.join(base, 'mnt');
  fs.mkdirSync(dir);
  const cleanups: (() => void)[] = [() => fs.rmSync(base, { recursive: true, force: true })];
  const cleanup = () => {
    for (const c of cleanups.splice(0).reverse()) c();
  };
  t.after(cleanup);

  let mounted: { ok: boolean; output: string };
  if (kind === 'tmpfs') {
    mounted = run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'booblik-full-disk', dir]);
  } else {
    const image = path.join(base, 'disk.img');
    fs.writeFileSync(image, '');
    fs.truncateSync(image, sizeBytes);
    const made = run('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
    if (!made.ok) {
      cleanup();
      return { skip: `cannot make an ext4 image: ${made.output || 'mkfs.ext4 failed'}` };
    }
    mounted = run('mount', ['-o', 'loop', image, dir]);
  }
  if (!mounted.ok) {
    cleanup();
    return {
      skip: `cannot mount a small ${kind} here (${mounted.output || 'mount failed'}); this check needs root`,
    };
  }
  cleanups.push(() => {
    // A process still holding a file keeps the mount busy: detach it lazily then, it goes when they do.
    if (!run('umount', [dir]).ok) run('umount', ['-l', dir]);
  });
  return { dir };
}

/** Bytes a non-root writer could still put on the filesystem holding `dir`. */
export function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}
