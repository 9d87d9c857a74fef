import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { ChecksumReply } from './checksum-worker.js';

/**
 * Hashes files in one worker thread (checksum-worker.ts), one after another, started on first use.
 * It keeps the process alive only while a hash is pending.
 */
class ChecksumWorker {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (hex: string) => void; reject: (e: Error) => void }
  >();

  sha256(file: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const worker = this.start();
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, file });
    });
  }

  private start(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = new Worker(new URL('./checksum-worker.js', import.meta.url));
    worker.on('message', (reply: ChecksumReply) => this.settle(reply));
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', () => {
      this.worker = null;
      this.failAll(new Error('the checksum worker exited'));
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(reply: ChecksumReply): void {
    const p = this.pending.get(reply.id);
    if (p === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.sha256 !== undefined) {
      p.resolve(reply.sha256);
      return;
    }
    const error = new Error(reply.error ?? 'checksum failed');
    p.reject(reply.code === undefined ? error : Object.assign(error, { code: reply.code }));
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

const worker = new ChecksumWorker();

/** SHA-256 of a file's bytes, as hex, hashed in a worker thread (a segment need not fit in memory). */
export function fileChecksum(file: string): Promise<string> {
  return worker.sha256(file);
}

export function bytesChecksum(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
