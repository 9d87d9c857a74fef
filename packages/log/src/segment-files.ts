import fs from 'node:fs';
import { fdatasync, fsyncDir, fsyncDirAsync, mkdirDurable, preadInto } from './fs-util.js';

/**
 * One open segment file: what the log does to it, and nothing else. The real one is a descriptor on
 * `node:fs`; tests use in-memory files that fail on purpose (see test-support/memory-files.ts).
 */
export interface SegmentFile {
  readonly path: string;
  /** The OS descriptor, for the native recovery scan and its worker thread; -1 when there is none. */
  readonly fd: number;
  /** Writes up to `length` bytes of `buf` from `offset` at `position`; returns how many it wrote. */
  pwrite(buf: Buffer, offset: number, length: number, position: number): number;
  /** Reads up to `length` bytes into `buf[0...]` at `position`; fewer only when the file ends first. */
  pread(buf: Buffer, length: number, position: number): Promise<number>;
  /** `pread` in the same turn (recovery, truncation), into `buf[offset...]`. */
  preadSync(buf: Buffer, offset: number, length: number, position: number): number;
  fdatasync(): Promise<void>;
  fdatasyncSync(): void;
  /** Its size and when it was last written. */
  stat(): { sizeBytes: number; mtimeMs: number };
  truncate(sizeBytes: number): void;
  /** Removes its name; the file stays readable through this handle until `close`. */
  unlink(): void;
  close(): void;
}

/** The directory side of segment files: what opening, a roll and a removal need. */
export interface SegmentFiles {
  /** Creates the directory (and its parents) so its name survives a power cut. */
  mkdirDurable(dir: string): void;
  /** The names in `dir`. */
  list(dir: string): string[];
  /** Opens an existing file (`existing`) or creates an empty one (`create`, truncating any). */
  open(file: string, how: 'existing' | 'create'): SegmentFile;
  sizeOf(file: string): number;
  unlink(file: string): void;
  /** Makes the names created or removed in `dir` durable. */
  fsyncDir(dir: string): void;
  fsyncDirAsync(dir: string): Promise<void>;
  /** Removes `dir` and everything in it. */
  removeDir(dir: string): void;
}

/** A segment file on a descriptor. */
export class NodeSegmentFile implements SegmentFile {
  constructor(
    readonly path: string,
    readonly fd: number,
  ) {}

  pwrite(buf: Buffer, offset: number, length: number, position: number): number {
    return fs.writeSync(this.fd, buf, offset, length, position);
  }

  pread(buf: Buffer, length: number, position: number): Promise<number> {
    return preadInto(this.fd, buf, length, position);
  }

  preadSync(buf: Buffer, offset: number, length: number, position: number): number {
    return fs.readSync(this.fd, buf, offset, length, position);
  }

  fdatasync(): Promise<void> {
    return fdatasync(this.fd);
  }

  fdatasyncSync(): void {
    fs.fdatasyncSync(this.fd);
  }

  stat(): { sizeBytes: number; mtimeMs: number } {
    const stat = fs.fstatSync(this.fd);
    return { sizeBytes: stat.size, mtimeMs: stat.mtimeMs };
  }

  truncate(sizeBytes: number): void {
    fs.ftruncateSync(this.fd, sizeBytes);
  }

  unlink(): void {
    fs.unlinkSync(this.path);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Segment files on the real file system. */
export const nodeSegmentFiles: SegmentFiles = {
  mkdirDurable,
  list: (dir) => fs.readdirSync(dir),
  open: (file, how) => new NodeSegmentFile(file, fs.openSync(file, how === 'create' ? 'w+' : 'r+')),
  sizeOf: (file) => fs.statSync(file).size,
  unlink: (file) => fs.unlinkSync(file),
  fsyncDir,
  fsyncDirAsync,
  removeDir: (dir) => fs.rmSync(dir, { recursive: true, force: true }),
};

/** Writes every byte of `buf` at `position` (a short write is carried on, an error thrown). */
export function pwriteFully(file: SegmentFile, buf: Buffer, position: number): void {
  let done = 0;
  while (done < buf.length) done += file.pwrite(buf, done, buf.length - done, position + done);
}
