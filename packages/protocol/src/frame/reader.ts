/**
 * Turns a byte stream into frames, as FrameSplitter does, but owns the memory the stream is read
 * into: the reader of the stream (a socket opened with `onread`) asks readTarget() where to put its
 * next bytes, then reports with written(n). So a large frame is read straight into a buffer of its
 * own size (one copy by the kernel, no chunks gathered and copied again), and small frames share one
 * buffer instead of a fresh allocation per read.
 *
 * Frames are handed out as views and their bytes are never written again: a view may be kept (a
 * fetched record's payload is one), and keeps its whole buffer alive. A buffer is left for a new one
 * once full. Buffers are allocated unfilled, as Node's own socket chunks and Buffer pool are: what a
 * read has not reached yet is never part of a frame. The reader does not pause (a sink's false from
 * frame() is not honoured): a socket's reader stops reading instead.
 */
import { lengthPrefixBytes } from '../limits.js';
import type { FrameLimits, FrameSink } from './splitter.js';

/** Room a buffer of small frames starts with: what libuv offers a socket read by default. */
const SHARED_BUFFER_BYTES = 64 * 1024;
/** Less room than this left in a buffer and the next read goes to a new one: a read this small is a wasted call. */
const READ_ROOM_BYTES_MIN = 4 * 1024;

export interface FrameReaderOptions {
  /** Size of the buffers small frames share (default 64 KiB); a larger frame gets a buffer of its own size. */
  sharedBufferBytes?: number;
}

export class FrameReader {
  private readonly sharedBufferBytes: number;
  private readonly readRoomBytesMin: number;
  /** The buffer being read into: bytes [unitStart, filled) are the unit not handed out yet. */
  private buffer: Buffer;
  private filled = 0;
  /** Where the length prefix of the next frame starts. */
  private unitStart = 0;
  private isDead = false;
  /** The size of the last frame (prefix included) when it was larger than a shared buffer; else 0. */
  private expectedUnitBytes = 0;

  constructor(
    private readonly limits: FrameLimits,
    options: FrameReaderOptions = {},
  ) {
    if (limits.frameBytesMin < 1 || limits.frameBytesMax < limits.headerBytes) {
      throw new Error(`FrameReader: inconsistent limits ${JSON.stringify(limits)}`);
    }
    this.sharedBufferBytes = options.sharedBufferBytes ?? SHARED_BUFFER_BYTES;
    if (!Number.isInteger(this.sharedBufferBytes) || this.sharedBufferBytes < lengthPrefixBytes) {
      throw new Error(
        `FrameReader: sharedBufferBytes ${this.sharedBufferBytes}, expected >= ${lengthPrefixBytes}`,
      );
    }
    this.readRoomBytesMin = Math.min(READ_ROOM_BYTES_MIN, this.sharedBufferBytes);
    this.buffer = Buffer.allocUnsafeSlow(this.sharedBufferBytes);
  }

  /** True once an invalid length was seen: the stream cannot be read any further. */
  get dead(): boolean {
    return this.isDead;
  }

  /** Bytes read and not handed out yet: the start of a frame that has not arrived whole. */
  get bufferedBytes(): number {
    return this.filled - this.unitStart;
  }

  /**
   * Where the next bytes of the stream go: never empty, and never over bytes already handed out.
   * The bytes of an unfinished frame move to a new buffer when it will not fit in this one. After a
   * large frame the next is expected as large (a reader catching up gets answers of its maxBytes):
   * it starts in a buffer of that size, so it lands whole, copied by no one.
   */
  readTarget(): Buffer {
    const pending = this.filled - this.unitStart;
    const unitBytes = this.unitBytes();
    const expected = unitBytes > 0 ? unitBytes : this.expectedUnitBytes;
    const room = this.buffer.length - this.unitStart;
    const fits =
      unitBytes > 0 ? unitBytes <= room : room >= expected && room - pending >= this.readRoomBytesMin;
    if (!fits) {
      const next = Buffer.allocUnsafeSlow(Math.max(expected, this.sharedBufferBytes));
      this.buffer.copy(next, 0, this.unitStart, this.filled);
      this.buffer = next;
      this.unitStart = 0;
      this.filled = pending;
    }
    return this.buffer.subarray(this.filled);
  }

  /** `n` bytes were put at the start of the last readTarget(): every frame now whole goes to the sink. */
  written(n: number, sink: FrameSink): void {
    const room = this.buffer.length - this.filled;
    if (!Number.isInteger(n) || n < 0 || n > room) {
      throw new Error(`FrameReader: ${n} bytes written, expected 0..${room}`);
    }
    if (this.isDead) return; // nothing after an invalid length is read
    this.filled += n;
    const buffer = this.buffer;
    while (!this.isDead && this.filled - this.unitStart >= lengthPrefixBytes) {
      const length = buffer.readInt32BE(this.unitStart);
      if (length < this.limits.frameBytesMin || length > this.limits.frameBytesMax) {
        this.isDead = true;
        this.filled = this.unitStart;
        sink.invalidLength(length);
        return;
      }
      const frameStart = this.unitStart + lengthPrefixBytes;
      const frameEnd = frameStart + length;
      if (frameEnd > this.filled) return;
      this.unitStart = frameEnd; // first: the sink may throw, and the frame is handed out either way
      const unitBytes = lengthPrefixBytes + length;
      this.expectedUnitBytes = unitBytes > this.sharedBufferBytes ? unitBytes : 0;
      if (length < this.limits.headerBytes) sink.shortFrame(length);
      else sink.frame(buffer.subarray(frameStart, frameEnd));
    }
  }

  /** Bytes the unit being read takes, length prefix included; 0 while its length is unknown (or invalid). */
  private unitBytes(): number {
    if (this.filled - this.unitStart < lengthPrefixBytes) return 0;
    const length = this.buffer.readInt32BE(this.unitStart);
    if (length < this.limits.frameBytesMin || length > this.limits.frameBytesMax) return 0;
    return lengthPrefixBytes + length;
  }
}
