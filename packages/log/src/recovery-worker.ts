/**
 * The recovery scan in a worker thread: a partition opened while the broker serves others (a topic
 * created or grown at runtime) scans its segments here, so the event loop keeps answering. The file
 * descriptor is the process's, shared with the main thread; only the result travels back.
 */
import { parentPort } from 'node:worker_threads';
import type { SegmentScanRequest } from './partition-log.js';
import { scanSegmentFile } from './recovery.js';

export interface ScanReply {
  id: number;
  error?: string;
  validBytes?: number;
  records?: number;
  invalidBytes?: number;
  stop?: string;
  relOffsets?: Uint32Array;
  positions?: Uint32Array;
}

parentPort?.on('message', ({ id, request }: { id: number; request: SegmentScanRequest }) => {
  try {
    const scan = scanSegmentFile(
      request.fd,
      request.fileBytes,
      request.baseOffset,
      request.indexIntervalBytes,
    );
    const { relOffsets, positions } = scan.index.toEntries();
    const reply: ScanReply = {
      id,
      validBytes: scan.validBytes,
      records: scan.records,
      invalidBytes: scan.invalidBytes,
      stop: scan.stop,
      relOffsets,
      positions,
    };
    parentPort!.postMessage(reply, [relOffsets.buffer as ArrayBuffer, positions.buffer as ArrayBuffer]);
  } catch (error) {
    parentPort!.postMessage({ id, error: String((error as Error)?.stack ?? error) } satisfies ScanReply);
  }
});
