import { recordHeaderBytes } from '@booblik/protocol';
import { StorageError } from './errors.js';
import type { ReadBufferPool, ReadLease } from './read-buffers.js';
import type { SegmentFile } from './segment-files.js';
import type { SparseIndex } from './sparse-index.js';

/** What a read needs of a local segment: its file, its index and how far it is written. */
export interface ReadableSegment {
  readonly file: SegmentFile;
  readonly path: string;
  readonly index: SparseIndex;
  readonly nextOffset: number;
  readonly sizeBytes: number;
  readonly visibleBytes: number;
}

export interface SegmentRead {
  /** Stored records from the requested offset (possibly cut inside the last), as file bytes. */
  bytes: Buffer;
  /** Hands the buffer back to the pool once the bytes are no longer needed (after the socket write). */
  release: (() => void) | undefined;
}

/**
 * Reads from `offset` in one segment, without parsing a record: the sparse index gives the last
 * entry at or before the offset, a hop over record headers finds its exact position, and the bytes
 * from there up to maxBytes (or the segment's readable end) are the answer. One read usually covers
 * both the hop (at most one index interval) and the answer.
 */
export async function readFromSegment(
  segment: ReadableSegment,
  offset: number,
  maxBytes: number,
  indexIntervalBytes: number,
  pool: ReadBufferPool,
  /** Where reading stops: the published end by default; a primary copying to a replica reads all written. */
  end = segment.visibleBytes,
): Promise<SegmentRead> {
  const entry = segment.index.floor(offset);
  let position = entry.position;
  let at = entry.offset;
  let window = Math.min(
    end - position,
    maxBytes + (at < offset ? indexIntervalBytes + recordHeaderBytes : 0),
  );
  let lease = pool.take(window);
  let bufStart = position;
  let got = await readLease(segment, lease, window, position);
  while (at < offset) {
    if (position + recordHeaderBytes > bufStart + got) {
      // A record longer than the interval: read on from where the hop stands.
      lease.release?.();
      window = Math.min(end - position, maxBytes + indexIntervalBytes);
      lease = pool.take(window);
      bufStart = position;
      got = await readLease(segment, lease, window, position);
      if (got < recordHeaderBytes) {
        lease.release?.();
        throw new StorageError(
          `${segment.path}: offset ${offset} not found where the index points`,
          undefined,
        );
      }
    }
    position += recordHeaderBytes + lease.buffer.readInt32BE(position - bufStart);
    at++;
  }
  const length = Math.min(maxBytes, end - position);
  if (position + length > bufStart + got) {
    lease.release?.();
    lease = pool.take(length);
    bufStart = position;
    got = await readLease(segment, lease, length, position);
  }
  return {
    bytes: lease.buffer.subarray(position - bufStart, position - bufStart + Math.min(length, got)),
    release: lease.release,
  };
}

async function readLease(
  segment: ReadableSegment,
  lease: ReadLease,
  length: number,
  position: number,
): Promise<number> {
  try {
    return await segment.file.pread(lease.buffer, length, position);
  } catch (error) {
    lease.release?.();
    // The disk's failure (EIO, ...), not ours: typed, so the broker answers STORAGE_ERROR.
    const code = (error as NodeJS.ErrnoException).code;
    throw new StorageError(`${segment.path}: read failed (${code ?? String(error)})`, code, { cause: error });
  }
}

/**
 * The file position of the record at `offset` in `segment` (its size when `offset` is its end), found
 * synchronously: the sparse index's entry, then a hop over record headers. For truncation, which is
 * rare and must be decided in one turn.
 */
export function positionOfOffset(segment: ReadableSegment, offset: number): number {
  if (offset === segment.nextOffset) return segment.sizeBytes;
  const entry = segment.index.floor(offset);
  const header = Buffer.allocUnsafe(4);
  let position = entry.position;
  for (let at = entry.offset; at < offset; at++) {
    if (segment.file.preadSync(header, 0, 4, position) !== 4) {
      throw new StorageError(`${segment.path}: offset ${offset} not found where the index points`, undefined);
    }
    position += recordHeaderBytes + header.readInt32BE(0);
  }
  return position;
}
