import fs from 'node:fs';
import path from 'node:path';
import { mkdirDurable } from '@booblik/log';
import { DataDirInUseError } from './errors.js';

/** The file in the data directory that says which process owns it. */
export const LOCK_FILE_NAME = 'booblik.lock';

/** Who holds a lock: enough to tell a live owner from a dead one whose pid was given to another process. */
interface Owner {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot), or null where there is no /proc. */
  startTime: string | null;
  /** /proc/sys/kernel/random/boot_id: start times only compare within one boot. */
  bootId: string | null;
}

/**
 * An exclusive claim on a data directory for the life of the process: two brokers on one directory
 * cut each other's active segments and write at the same offsets.
 *
 * Why a pid file and not flock/fcntl: Node has no flock, the native module is optional (the broker
 * must work with BOOBLIK_NATIVE=0 or without a compiler), and a lock that exists only when the native
 * module is built would be two behaviours to test and document. A pid file works everywhere; what a
 * kernel lock gives for free (it dies with the process) it gets from a liveness check: the owner's
 * pid must be alive AND have the start time written into the file, so a broker killed with SIGKILL,
 * whose pid the kernel later gave to another process, does not block the next start. "Alive" means
 * not a zombie: a broker killed with SIGKILL whose parent has not reaped it yet still answers a
 * signal 0 and keeps its start time, but it holds no file and can never write again, so its state in
 * /proc (Z, or X while it is being reaped) counts as dead. (A Node process ends when its main thread
 * does, so a broker's pid in state Z is the whole process gone, not a leader waiting for threads.)
 * The state check is what a kernel lock would add, and a kernel lock only where the native module is
 * built would still need this check where it is not: one behaviour everywhere is kept instead.
 *
 * The file is created complete or not at all: written under a unique name, then hard-linked to
 * `booblik.lock`, which fails if the name exists (the same guarantee as O_CREAT|O_EXCL, without a
 * window where another broker reads an empty file). A stale file is removed only if it still holds
 * what was judged stale, and a new claim is read back. That leaves one window, two system calls wide:
 * two brokers started at the same instant on a directory whose owner died could both win (a kernel
 * lock would close it; starting brokers one at a time, as a supervisor does, never meets it).
 */
export class DataDirLock {
  private released = false;

  private constructor(
    readonly file: string,
    private readonly content: string,
  ) {}

  /**
   * Throws DataDirInUseError if a live process holds the directory; creates and changes nothing, so a
   * broker can refuse before it binds a port and before it writes anything.
   */
  static check(dataDir: string): void {
    const dir = path.resolve(dataDir);
    const owner = parseOwner(readIfExists(path.join(dir, LOCK_FILE_NAME)) ?? '');
    if (owner !== null && isAlive(owner)) throw new DataDirInUseError(dir, owner.pid);
  }

  /** Takes the lock, creating the directory if needed; throws DataDirInUseError if a live process holds it. */
  static acquire(dataDir: string): DataDirLock {
    const dir = path.resolve(dataDir);
    mkdirDurable(dir); // the directory may be new: its name durable before anything is acknowledged
    const file = path.join(dir, LOCK_FILE_NAME);
    const content = formatOwner(ownerOf(process.pid));
    // Bounded: each round either wins, finds a live owner, or removes one stale file.
    for (let attempt = 0; attempt < 5; attempt++) {
      if (tryCreate(file, content)) {
        const lock = new DataDirLock(file, content);
        heldLocks.add(lock);
        if (!exitHookInstalled) {
          exitHookInstalled = true;
          process.on('exit', () => {
            for (const held of [...heldLocks]) held.release();
          });
        }
        return lock;
      }
      const seen = readIfExists(file);
      if (seen === null) continue; // released meanwhile: try again
      const owner = parseOwner(seen);
      if (owner !== null && isAlive(owner)) throw new DataDirInUseError(dir, owner.pid);
      // A dead owner (or a file that is not ours to understand, left by a crash): take it over.
      if (readIfExists(file) === seen) fs.rmSync(file, { force: true });
    }
    const owner = parseOwner(readIfExists(file) ?? '');
    throw new DataDirInUseError(dir, owner?.pid ?? -1);
  }

  /** Removes the lock file if it is still ours. Idempotent; also runs at process exit. */
  release(): void {
    if (this.released) return;
    this.released = true;
    heldLocks.delete(this);
    try {
      if (fs.readFileSync(this.file, 'utf8') === this.content) fs.unlinkSync(this.file);
    } catch {
      // Already gone (the directory was removed): nothing to release.
    }
  }
}

/** Locks this process holds: a crash that still runs exit handlers (an uncaught exception) releases them. */
const heldLocks = new Set<DataDirLock>();
let exitHookInstalled = false;

function tryCreate(file: string, content: string): boolean {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(temp, content, { flag: 'wx' });
  try {
    fs.linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  // Read back: only the content this process wrote counts as holding the lock.
  return readIfExists(file) === content;
}

function readIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function ownerOf(pid: number): Owner {
  return { pid, startTime: processStartTime(pid), bootId: readProc('/proc/sys/kernel/random/boot_id') };
}

function formatOwner(owner: Owner): string {
  return `pid ${owner.pid}\nstart ${owner.startTime ?? '-'}\nboot ${owner.bootId ?? '-'}\n`;
}

function parseOwner(text: string): Owner | null {
  const m = /^pid (\d+)\nstart (\S+)\nboot (\S+)\n$/.exec(text);
  if (m === null) return null;
  const orNull = (s: string) => (s === '-' ? null : s);
  return { pid: Number(m[1]), startTime: orNull(m[2]!), bootId: orNull(m[3]!) };
}

/**
 * The pid answers a signal 0 and, where /proc can tell, is the same process that wrote the file and
 * has not exited. Anything /proc cannot tell counts as alive: the check fails closed.
 */
function isAlive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: alive, owned by another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const bootId = readProc('/proc/sys/kernel/random/boot_id');
  if (owner.bootId !== null && bootId !== null && owner.bootId !== bootId) return false;
  const stat = processStat(owner.pid);
  if (stat === null) return true;
  if (owner.startTime !== null && stat.startTime !== null && owner.startTime !== stat.startTime) return false;
  return !EXITED_STATES.has(stat.state);
}

/** Process states of /proc/<pid>/stat for a process that has exited: a zombie, or dead (`x` before Linux 3.13). */
const EXITED_STATES = new Set(['Z', 'X', 'x']);

function processStartTime(pid: number): string | null {
  return processStat(pid)?.startTime ?? null;
}

/** Fields 3 (state) and 22 (start time, clock ticks after boot) of /proc/<pid>/stat, or null where there is none. */
function processStat(pid: number): { state: string; startTime: string | null } | null {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', startTime: fields[19] ?? null };
}

function readProc(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}
