import { Worker } from 'node:worker_threads';
import type { SegmentScanner, SegmentScanRequest } from './partition-log.js';
import type { ScanStop } from './record-scan.js';
import type { SegmentScan } from './recovery.js';
import type { ScanReply } from './recovery-worker.js';
import { SparseIndex } from './sparse-index.js';

/**
 * Scans segments in one worker thread, one request after another (the disk is the limit, not the
 * CPU), started on first use. It keeps the process alive only while a scan is pending.
 */
export class WorkerScanner {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { request: SegmentScanRequest; resolve: (s: SegmentScan) => void; reject: (e: Error) => void }
  >();

  readonly scan: SegmentScanner = (request) =>
    new Promise((resolve, reject) => {
      const worker = this.start();
      const id = this.nextId++;
      this.pending.set(id, { request, resolve, reject });
      worker.ref();
      worker.postMessage({ id, request });
    });

  private start(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = new Worker(new URL('./recovery-worker.js', import.meta.url));
    worker.on('message', (reply: ScanReply) => this.settle(reply));
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', () => {
      this.worker = null;
      this.failAll(new Error('the recovery scan worker exited'));
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(reply: ScanReply): void {
    const p = this.pending.get(reply.id);
    if (p === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.error !== undefined) {
      p.reject(new Error(`recovery scan failed: ${reply.error}`));
      return;
    }
    p.resolve({
      validBytes: reply.validBytes!,
      records: reply.records!,
      invalidBytes: reply.invalidBytes!,
      stop: reply.stop as ScanStop,
      index: SparseIndex.fromEntries(
        p.request.baseOffset,
        p.request.indexIntervalBytes,
        reply.relOffsets!,
        reply.positions!,
        reply.validBytes!,
      ),
    });
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) await worker.terminate();
  }
}

/** One scanner per process is enough: scans queue behind each other on the same disk. */
export const sharedWorkerScanner = new WorkerScanner();
