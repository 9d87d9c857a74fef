import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { within } from '@booblik/testkit';

/** The Go source of the filesystem (test/powercutfs) and where its binary is built (test/dist). */
const sourceDir = new URL('../../powercutfs/', import.meta.url).pathname;
const binary = new URL('../powercutfs', import.meta.url).pathname;
/** A first build downloads go-fuse from the module proxy and compiles it; later ones hit Go's cache. */
const BUILD_TIMEOUT_MS = 180_000;
/** Mounting, and a cut (unmount, then rewriting a few MiB): well under a second; generous for a loaded machine. */
const STEP_TIMEOUT_MS = 30_000;

/** What the filesystem counted, reported when it is cut (see test/powercutfs/model.go). */
export interface CutReport {
  fileSyncs: number;
  dirSyncs: number;
  /** Directory fsyncs answered but not honoured (the mutant's `ignoreDirFsync`). */
  ignoredDirSyncs: number;
  filesBefore: number;
  bytesBefore: number;
  filesAfter: number;
  bytesAfter: number;
  directoriesAfter: number;
}

type FilesystemEvent = CutReport & { event: 'mounted' | 'cut' | 'unmounted' };

let built: Promise<void> | undefined;

/** `go build` of the filesystem, once per test process. */
function build(): Promise<void> {
  built ??= new Promise((resolve, reject) => {
    const go = spawn('go', ['build', '-o', binary, '.'], {
      cwd: sourceDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    go.stdout.on('data', (d) => {
      output += d;
    });
    go.stderr.on('data', (d) => {
      output += d;
    });
    go.on('error', (error) => reject(new Error(`cannot run go to build the power-cut filesystem: ${error}`)));
    go.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`go build of ${sourceDir} failed (${code}):\n${output}`)),
    );
  });
  return within(built, BUILD_TIMEOUT_MS, 'go build of the power-cut filesystem');
}

/** Why this machine cannot run the power-cut filesystem, or null when it can. */
function unavailable(): string | null {
  if (!fs.existsSync('/dev/fuse')) return 'no /dev/fuse on this machine: the power-cut check needs FUSE';
  if (process.getuid?.() !== 0) return 'the power-cut filesystem mounts with mount(2), which needs root';
  return null;
}

/**
 * A FUSE filesystem (test/powercutfs) that keeps what a disk holds for sure: a file's content as of
 * its last fsync or fdatasync, a directory's entries as of its last fsync. `cut()` is the power cut:
 * it unmounts and rolls `backingDir` back to exactly that. Whatever ran on `mountDir` must be gone
 * first (kill it); afterwards `backingDir` is the disk as a machine finds it when power returns.
 */
export class PowerCutFilesystem {
  private constructor(
    readonly mountDir: string,
    readonly backingDir: string,
    private readonly proc: ChildProcess,
    private readonly exited: Promise<number | null>,
    private readonly finished: Promise<FilesystemEvent>,
  ) {}

  /**
   * Mounts a fresh, empty filesystem for this test, unmounted and removed when the test ends. With
   * `ignoreDirFsync` (paths relative to the mount, "." for its root) the fsyncs of those directories
   * are answered but not honoured: a program that forgot them.
   */
  static async mount(
    t: TestContext,
    options: { ignoreDirFsync?: string[] } = {},
  ): Promise<PowerCutFilesystem | { skip: string }> {
    const reason = unavailable();
    if (reason !== null) return { skip: reason };
    await build();
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-power-cut-'));
    const mountDir = path.join(base, 'mnt');
    const backingDir = path.join(base, 'disk');
    fs.mkdirSync(mountDir);
    fs.mkdirSync(backingDir);
    const args = ['-backing', backingDir, '-mount', mountDir];
    if (options.ignoreDirFsync?.length) args.push('-ignore-dir-fsync', options.ignoreDirFsync.join(','));
    const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr!.on('data', (d) => {
      stderr += d;
    });
    // 'close', not 'exit': by then its last line has been read too.
    const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    t.after(async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM'); // unmounts without a cut
        await within(exited, STEP_TIMEOUT_MS, 'the power-cut filesystem to unmount').catch(() => {
          proc.kill('SIGKILL');
        });
      }
      // Should the filesystem have died mounted, detach the mount before removing what is under it.
      if (fs.readFileSync('/proc/mounts', 'utf8').includes(` ${mountDir} `)) {
        spawnSync('umount', ['-l', mountDir]);
      }
      fs.rmSync(base, { recursive: true, force: true });
    });

    // It prints two lines: one once mounted, one when it is done (the cut, or an unmount).
    const outcomes: { resolve: (e: FilesystemEvent) => void; reject: (e: Error) => void }[] = [];
    const [mounted, finished] = [0, 1].map(
      () => new Promise<FilesystemEvent>((resolve, reject) => outcomes.push({ resolve, reject })),
    ) as [Promise<FilesystemEvent>, Promise<FilesystemEvent>];
    finished.catch(() => {}); // awaited by cut() only; an exit at cleanup is no failure of its own
    let seen = 0;
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      outcomes[seen++]?.resolve(JSON.parse(line) as FilesystemEvent);
    });
    void exited.then((code) => {
      for (const o of outcomes) o.reject(new Error(`the power-cut filesystem exited (${code}):\n${stderr}`));
    });
    const first = await within(mounted, STEP_TIMEOUT_MS, 'the power-cut filesystem to mount');
    if (first.event !== 'mounted') throw new Error(`power-cut filesystem: ${JSON.stringify(first)}`);
    return new PowerCutFilesystem(mountDir, backingDir, proc, exited, finished);
  }

  /** The power cut: unmounts and drops everything not synced. Kill every user of the mount first. */
  async cut(): Promise<CutReport> {
    this.proc.kill('SIGUSR1');
    const report = await within(this.finished, STEP_TIMEOUT_MS, 'the power cut');
    const code = await within(this.exited, STEP_TIMEOUT_MS, 'the power-cut filesystem to exit');
    if (report.event !== 'cut' || code !== 0) {
      throw new Error(`power cut failed (exit ${code}): ${JSON.stringify(report)}`);
    }
    return report;
  }
}
