import fs from 'node:fs';
import { nativeAddon, recordHeaderBytes, scanStops } from '@booblik/protocol';
import { RECOVERY_READ_BYTES } from './limits.js';
import { type ScanStop, scanStoredRecords } from './record-scan.js';
import type { SegmentFile } from './segment-files.js';
import { SparseIndex } from './sparse-index.js';

export interface SegmentScan {
  /** Bytes of whole, valid records from the start of the file. */
  validBytes: number;
  records: number;
  /** Bytes after the valid ones: cut off the file by `truncateSegment`. */
  invalidBytes: number;
  stop: ScanStop;
  index: SparseIndex;
}

/**
 * Scans a segment file from its start, checking every record (size, bounds, CRC-32C) and rebuilding
 * the sparse index. Stops at the first record that fails: what follows a torn or corrupt record is
 * not trusted, even if it looks whole.
 */
export function scanSegmentFile(
  fd: number,
  fileBytes: number,
  baseOffset: number,
  indexIntervalBytes: number,
): SegmentScan {
  if (nativeAddon !== null && fileBytes > 0) {
    // The file mapped and scanned in place, with the CPU's CRC instruction: no copy through a buffer.
    const scan = nativeAddon.scanFile(fd, fileBytes, indexIntervalBytes);
    return {
      validBytes: scan.validBytes,
      records: scan.records,
      invalidBytes: fileBytes - scan.validBytes,
      stop: scanStops[scan.stop]!,
      index: SparseIndex.fromEntries(
        baseOffset,
        indexIntervalBytes,
        scan.indexOffsets,
        scan.indexPositions,
        scan.validBytes,
      ),
    };
  }
  return scanSegmentFileTs(fd, fileBytes, baseOffset, indexIntervalBytes);
}

/** `scanSegmentFile` of a segment file: natively on its descriptor when it has one, else through its reads. */
export function scanFile(
  file: SegmentFile,
  fileBytes: number,
  baseOffset: number,
  indexIntervalBytes: number,
): SegmentScan {
  if (file.fd >= 0) return scanSegmentFile(file.fd, fileBytes, baseOffset, indexIntervalBytes);
  return scanWith(
    (buf, offset, length, position) => file.preadSync(buf, offset, length, position),
    fileBytes,
    baseOffset,
    indexIntervalBytes,
  );
}

/** The TypeScript reference of the recovery scan: chunked reads, every record checked. */
export function scanSegmentFileTs(
  fd: number,
  fileBytes: number,
  baseOffset: number,
  indexIntervalBytes: number,
): SegmentScan {
  return scanWith(
    (buf, offset, length, position) => fs.readSync(fd, buf, offset, length, position),
    fileBytes,
    baseOffset,
    indexIntervalBytes,
  );
}

type ReadSync = (buf: Buffer, offset: number, length: number, position: number) => number;

function scanWith(
  read: ReadSync,
  fileBytes: number,
  baseOffset: number,
  indexIntervalBytes: number,
): SegmentScan {
  const index = new SparseIndex(baseOffset, indexIntervalBytes);
  let buf = Buffer.allocUnsafe(Math.min(RECOVERY_READ_BYTES, Math.max(fileBytes, recordHeaderBytes)));
  let filePos = 0; // where the bytes in buf start
  let records = 0;
  let stop: ScanStop = 'end';
  while (filePos < fileBytes) {
    const want = Math.min(buf.length, fileBytes - filePos);
    const got = readFully(read, buf, want, filePos);
    const atEof = filePos + got >= fileBytes;
    const chunkStart = filePos;
    const scan = scanStoredRecords(buf, 0, got, (pos, bytes) => {
      index.noteRecord(baseOffset + records, chunkStart + pos, bytes);
      records++;
    });
    filePos += scan.validBytes;
    if (scan.stop === 'end') continue;
    const cutByChunk = !atEof && (scan.stop === 'short-header' || scan.stop === 'past-end');
    if (!cutByChunk) {
      stop = scan.stop;
      break;
    }
    // The record continues past this read: make room for it whole, then read again from its start.
    if (scan.validBytes === 0) {
      const needed = recordHeaderBytes + buf.readInt32BE(0);
      if (needed > fileBytes - filePos) {
        stop = 'past-end'; // decided without reading a record the file cannot hold
        break;
      }
      if (needed > buf.length) buf = Buffer.allocUnsafe(needed);
    }
  }
  return { validBytes: filePos, records, invalidBytes: fileBytes - filePos, stop, index };
}

function readFully(read: ReadSync, buf: Buffer, length: number, position: number): number {
  let got = 0;
  while (got < length) {
    const n = read(buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** Cuts a segment file after its valid records, so stale bytes can never come back, and makes the cut durable. */
export function truncateSegment(file: SegmentFile, validBytes: number): void {
  file.truncate(validBytes);
  file.fdatasyncSync();
}
