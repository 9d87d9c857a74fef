/**
 * Buffers for reads from segment files, reused instead of allocated per FETCH. A fresh large buffer
 * is memory the kernel must fault in page by page as the read fills it; on this kind of VM that runs
 * at a few hundred MiB/s, slower than the read itself, so a reader of old data was paced by page
 * faults. A buffer goes back to the pool only when the socket is done with it (`release`).
 */

import { DEFAULT_READ_POOL_BYTES, READ_POOLED_MIN_BYTES } from './limits.js';

/** A buffer on loan: `release` hands it back (once; later calls do nothing). */
export interface ReadLease {
  buffer: Buffer;
  release: (() => void) | undefined;
}

export class ReadBufferPool {
  private readonly free = new Map<number, Buffer[]>();
  private pooledBytes = 0;

  constructor(private readonly maxPooledBytes = DEFAULT_READ_POOL_BYTES) {}

  /** A buffer of at least `bytes` (its first `bytes` are what the caller uses). */
  take(bytes: number): ReadLease {
    if (bytes < READ_POOLED_MIN_BYTES) return { buffer: Buffer.allocUnsafe(bytes), release: undefined };
    const size = 2 ** Math.ceil(Math.log2(bytes));
    let buffer = this.free.get(size)?.pop();
    if (buffer !== undefined) this.pooledBytes -= size;
    else buffer = Buffer.allocUnsafeSlow(size);
    let released = false;
    return {
      buffer,
      release: () => {
        if (released) return; // twice would lend one buffer to two readers
        released = true;
        this.give(buffer!);
      },
    };
  }

  private give(buffer: Buffer): void {
    if (this.pooledBytes + buffer.length > this.maxPooledBytes) return;
    let list = this.free.get(buffer.length);
    if (list === undefined) {
      list = [];
      this.free.set(buffer.length, list);
    }
    list.push(buffer);
    this.pooledBytes += buffer.length;
  }

  /** Bytes idle in the pool (for tests and metrics). */
  get idleBytes(): number {
    return this.pooledBytes;
  }
}

/** One pool for every partition of the process: reads come and go, the pool stays warm. */
export const sharedReadBuffers = new ReadBufferPool();
