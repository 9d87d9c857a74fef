import path from 'node:path';
import type { SegmentFile, SegmentFiles } from '../segment-files.js';

/** A file's bytes, and how much of them an fdatasync made durable. */
class Inode {
  data = Buffer.alloc(0);
  length = 0;
  /** The bytes as of the last fdatasync: what a crash leaves. */
  synced = Buffer.alloc(0);
  mtimeMs = Date.now();

  bytes(): Buffer {
    return this.data.subarray(0, this.length);
  }

  resize(length: number): void {
    if (length > this.data.length) {
      const grown = Buffer.alloc(Math.max(length, this.data.length * 2));
      this.data.copy(grown, 0, 0, this.length);
      this.data = grown;
    } else if (length > this.length) {
      this.data.fill(0, this.length, length);
    }
    this.length = length;
  }
}

function errno(code: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${what}`), { code });
}

/**
 * Segment files in memory that fail on purpose, for fast tests of what the log does when the disk
 * refuses: the Nth write or sync fails (EIO by default), the Nth write is short, the disk fills
 * (ENOSPC past `limitBytes`), and `crash()` gives the files as a restart finds them, without the bytes
 * and names that were never made durable. Counts start from when a fault is set: `failWrite(1)` is
 * the next write.
 */
export class MemoryFiles implements SegmentFiles {
  private readonly names = new Map<string, Inode>();
  /** The names as of the last fsync of their directory. */
  private readonly durableNames = new Map<string, Inode>();
  private readonly dirs = new Set<string>();
  private writes = 0;
  private syncs = 0;
  private readonly writeFaults = new Map<number, { code: string } | { shortBytes: number }>();
  private readonly syncFaults = new Map<number, string>();
  private capacityBytes = Number.POSITIVE_INFINITY;

  /** The `nth` write from now throws `code`. */
  failWrite(nth: number, code = 'EIO'): void {
    this.writeFaults.set(this.writes + nth, { code });
  }

  /** The `nth` write from now writes only `bytes` bytes (and says so). */
  shortWrite(nth: number, bytes: number): void {
    this.writeFaults.set(this.writes + nth, { shortBytes: bytes });
  }

  /** The `nth` fdatasync from now throws `code`. */
  failSync(nth: number, code = 'EIO'): void {
    this.syncFaults.set(this.syncs + nth, code);
  }

  /** The disk holds `bytes` in all (the bytes of every file): a write past it is short, then ENOSPC. */
  limitBytes(bytes: number): void {
    this.capacityBytes = bytes;
  }

  /** Bytes every file holds now. */
  usedBytes(): number {
    let total = 0;
    for (const inode of new Set(this.names.values())) total += inode.length;
    return total;
  }

  /** A file's bytes as they are now (not necessarily durable). */
  contents(file: string): Buffer {
    const inode = this.names.get(path.resolve(file));
    if (inode === undefined) throw errno('ENOENT', file);
    return Buffer.from(inode.bytes());
  }

  /**
   * The files as a restart after a power cut finds them: only names whose directory was fsynced,
   * each file with its fdatasync'ed bytes, plus the first `keepUnsyncedBytes` of what followed (the
   * page cache wrote part back before the cut: a torn record).
   */
  crash(options: { keepUnsyncedBytes?: number } = {}): MemoryFiles {
    const keep = options.keepUnsyncedBytes ?? 0;
    const after = new MemoryFiles();
    for (const dir of this.dirs) after.dirs.add(dir);
    for (const [name, inode] of this.durableNames) {
      const copy = new Inode();
      const synced = inode.synced.length;
      const kept = Math.min(inode.length, synced + keep);
      copy.resize(kept);
      inode.synced.copy(copy.data, 0);
      if (kept > synced) inode.data.copy(copy.data, synced, synced, kept);
      copy.synced = Buffer.from(copy.bytes());
      copy.mtimeMs = inode.mtimeMs;
      after.names.set(name, copy);
      after.durableNames.set(name, copy);
    }
    return after;
  }

  mkdirDurable(dir: string): void {
    for (let d = path.resolve(dir); !this.dirs.has(d) && d !== path.dirname(d); d = path.dirname(d)) {
      this.dirs.add(d);
    }
  }

  list(dir: string): string[] {
    const target = path.resolve(dir);
    if (!this.dirs.has(target)) throw errno('ENOENT', dir);
    return [...this.names.keys()].filter((n) => path.dirname(n) === target).map((n) => path.basename(n));
  }

  open(file: string, how: 'existing' | 'create'): SegmentFile {
    const name = path.resolve(file);
    let inode = this.names.get(name);
    if (how === 'create') {
      if (!this.dirs.has(path.dirname(name))) throw errno('ENOENT', file);
      inode = new Inode();
      this.names.set(name, inode);
    }
    if (inode === undefined) throw errno('ENOENT', file);
    return new MemoryFile(this, name, inode);
  }

  sizeOf(file: string): number {
    const inode = this.names.get(path.resolve(file));
    if (inode === undefined) throw errno('ENOENT', file);
    return inode.length;
  }

  unlink(file: string): void {
    if (!this.names.delete(path.resolve(file))) throw errno('ENOENT', file);
  }

  fsyncDir(dir: string): void {
    const target = path.resolve(dir);
    for (const name of [...this.durableNames.keys()]) {
      if (path.dirname(name) === target && !this.names.has(name)) this.durableNames.delete(name);
    }
    for (const [name, inode] of this.names) {
      if (path.dirname(name) === target) this.durableNames.set(name, inode);
    }
  }

  async fsyncDirAsync(dir: string): Promise<void> {
    this.fsyncDir(dir);
  }

  removeDir(dir: string): void {
    const target = path.resolve(dir);
    for (const name of [...this.names.keys()]) if (path.dirname(name) === target) this.names.delete(name);
    this.dirs.delete(target);
  }

  /** One write's fate: how many of `length` bytes growing the file by `growth` it may write. */
  admitWrite(length: number, growth: number, file: string): number {
    this.writes++;
    const fault = this.writeFaults.get(this.writes);
    this.writeFaults.delete(this.writes);
    if (fault !== undefined && 'code' in fault) throw errno(fault.code, `write to ${file}`);
    let allowed = fault !== undefined ? Math.min(length, fault.shortBytes) : length;
    const room = this.capacityBytes - this.usedBytes();
    if (growth > room) {
      allowed = Math.min(allowed, length - growth + Math.max(0, room));
      if (allowed <= 0) throw errno('ENOSPC', `write to ${file}`);
    }
    return allowed;
  }

  admitSync(file: string): void {
    this.syncs++;
    const code = this.syncFaults.get(this.syncs);
    this.syncFaults.delete(this.syncs);
    if (code !== undefined) throw errno(code, `fdatasync of ${file}`);
  }
}

class MemoryFile implements SegmentFile {
  readonly fd = -1;
  private closed = false;

  constructor(
    private readonly files: MemoryFiles,
    readonly path: string,
    private readonly inode: Inode,
  ) {}

  private check(): void {
    if (this.closed) throw errno('EBADF', this.path);
  }

  pwrite(buf: Buffer, offset: number, length: number, position: number): number {
    this.check();
    const growth = Math.max(0, position + length - this.inode.length);
    const n = this.files.admitWrite(length, growth, this.path);
    if (position + n > this.inode.length) this.inode.resize(position + n);
    buf.copy(this.inode.data, position, offset, offset + n);
    this.inode.mtimeMs = Date.now();
    return n;
  }

  async pread(buf: Buffer, length: number, position: number): Promise<number> {
    return this.preadSync(buf, 0, length, position);
  }

  preadSync(buf: Buffer, offset: number, length: number, position: number): number {
    this.check();
    const end = Math.min(this.inode.length, position + length);
    if (end <= position) return 0;
    return this.inode.data.copy(buf, offset, position, end);
  }

  async fdatasync(): Promise<void> {
    this.fdatasyncSync();
  }

  fdatasyncSync(): void {
    this.check();
    this.files.admitSync(this.path);
    this.inode.synced = Buffer.from(this.inode.bytes());
  }

  stat(): { sizeBytes: number; mtimeMs: number } {
    this.check();
    return { sizeBytes: this.inode.length, mtimeMs: this.inode.mtimeMs };
  }

  truncate(sizeBytes: number): void {
    this.check();
    this.inode.resize(sizeBytes);
  }

  unlink(): void {
    this.files.unlink(this.path);
  }

  close(): void {
    this.check();
    this.closed = true;
  }
}
