import { crc32c, recordHeaderBytes } from '@booblik/protocol';
import { StorageError } from './errors.js';
import type { Fragment, FragmentSource } from './fragment.js';
import { SparseIndex } from './sparse-index.js';
import type { SegmentBytes, StoredSegment } from './stored-segment.js';

/** Why a read of a fragment was refused: the store's bytes are not the records they should be. */
export const CORRUPT_FRAGMENT = 'ECORRUPTFRAGMENT';

/**
 * A segment whose bytes are only in a store. Reads go through the same sparse index a local segment
 * has and answer the same bytes a read of the local file gave; every record a read walks over or
 * returns is checked (size, bounds, CRC-32C) first, so a corrupted object is never served.
 */
export class RemoteSegment implements StoredSegment {
  readonly isLocal = false as const;
  readonly index: SparseIndex;

  constructor(
    readonly fragment: Fragment,
    private readonly source: FragmentSource,
  ) {
    const { index } = fragment;
    this.index = SparseIndex.fromEntries(
      fragment.baseOffset,
      Math.max(1, index.intervalBytes),
      Uint32Array.from(index.relOffsets),
      Uint32Array.from(index.positions),
      fragment.sizeBytes,
    );
  }

  get baseOffset(): number {
    return this.fragment.baseOffset;
  }

  get nextOffset(): number {
    return this.fragment.endOffset;
  }

  get sizeBytes(): number {
    return this.fragment.sizeBytes;
  }

  get lastWriteMs(): number {
    return this.fragment.lastWriteMs;
  }

  /** Up to `maxBytes` of stored records from `offset`, as `readBytes` gives them (no pooled buffer). */
  async read(offset: number, maxBytes: number): Promise<SegmentBytes> {
    return { bytes: await this.readBytes(offset, maxBytes), release: undefined };
  }

  /** Nothing to let go: the store's object is not held open. */
  close(): void {}

  /** Nothing local to remove: the store's object is deleted by whoever owns the store. */
  remove(): void {}

  /** Up to `maxBytes` of stored records from `offset`, cut inside the last one as a file read is. */
  async readBytes(offset: number, maxBytes: number): Promise<Buffer> {
    const end = this.fragment.sizeBytes;
    const entry = this.index.floor(offset);
    const bufStart = entry.position;
    let buf = await this.fetch(
      bufStart,
      Math.min(end, bufStart + this.fragment.index.intervalBytes + maxBytes),
    );
    const ensure = async (upTo: number) => {
      const have = bufStart + buf.length;
      if (upTo <= have) return;
      if (upTo > end) throw this.corrupt(`a record runs past the object's end (${end} bytes)`);
      const more = await this.fetch(have, Math.min(end, Math.max(upTo, have + maxBytes)));
      if (more.length < upTo - have) throw this.corrupt(`the object is shorter than ${end} bytes`);
      buf = Buffer.concat([buf, more]);
    };
    let position = entry.position;
    let at = entry.offset;
    let start = -1;
    while (position < end) {
      if (at === offset) start = position;
      if (start >= 0 && position - start >= maxBytes) break;
      await ensure(position + recordHeaderBytes);
      const size = buf.readInt32BE(position - bufStart);
      if (size <= 0) throw this.corrupt(`record ${at} has size ${size}`);
      const payload = position + recordHeaderBytes;
      await ensure(payload + size);
      const crc = buf.readUInt32BE(position - bufStart + 4);
      if (crc32c(buf, payload - bufStart, payload - bufStart + size) !== crc) {
        throw this.corrupt(`record ${at} at position ${position} fails its CRC-32C`);
      }
      position = payload + size;
      at++;
    }
    if (position >= end && at !== this.fragment.endOffset) {
      throw this.corrupt(`it holds records up to ${at}, its name says ${this.fragment.endOffset}`);
    }
    if (start < 0) throw this.corrupt(`offset ${offset} not found where the index points`);
    return buf.subarray(start - bufStart, Math.min(position, start + maxBytes) - bufStart);
  }

  private async fetch(start: number, end: number): Promise<Buffer> {
    try {
      return await this.source.read(this.fragment, start, end);
    } catch (error) {
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        `fragment ${this.fragment.key}: store read failed: ${(error as Error).message ?? String(error)}`,
        (error as NodeJS.ErrnoException).code,
        { cause: error },
      );
    }
  }

  private corrupt(detail: string): StorageError {
    return new StorageError(`fragment ${this.fragment.key}: ${detail}; not served`, CORRUPT_FRAGMENT);
  }
}
