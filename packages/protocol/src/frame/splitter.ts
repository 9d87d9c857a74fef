import { lengthPrefixBytes } from '../limits.js';

/** What the splitter hands to its owner, one call per complete unit of the stream. */
export interface FrameSink {
  /**
   * A whole frame: the bytes after the length prefix. A view; copy it to keep it past the call.
   * Returning false pauses the splitter: the rest of the input is held until `resume`.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: sinks that never pause are plain void methods
  frame(frame: Buffer): boolean | void;
  /**
   * A frame whose length is plausible but shorter than the header (requests: 1..7 bytes). Its bytes
   * were consumed, so the stream stays usable; the broker answers CORRUPT_REQUEST with id 0.
   */
  shortFrame(frameLength: number): void;
  /**
   * A length prefix outside the allowed range: nothing after it can be trusted, so the stream is
   * dead. The owner closes the connection; the splitter ignores any further input.
   */
  invalidLength(frameLength: number): void;
}

export interface FrameLimits {
  /** Smallest allowed frame length (after the prefix). */
  frameBytesMin: number;
  /** Largest allowed frame length. */
  frameBytesMax: number;
  /** Frames shorter than this (but >= frameBytesMin) are reported as short, not as frames. */
  headerBytes: number;
}

enum State {
  Length,
  Body,
  Dead,
}

/**
 * Turns a byte stream, chunked any way at all, into frames. A frame that lies inside one chunk is
 * handed over as a view without copying; only a frame split across chunks is gathered.
 */
export class FrameSplitter {
  private state = State.Length;
  /** Pieces of the unit being gathered (the length prefix or a frame body) and their total. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private frameLength = 0;
  /** Input not yet looked at because the sink paused: the rest of a chunk, then later chunks. */
  private held: Buffer[] = [];
  private paused = false;

  /**
   * `chunksOwned`: the caller never reuses a chunk after push (a net.Socket's 'data' chunks are fresh
   * buffers), so a frame split across chunks is gathered from views and copied once, not twice.
   */
  constructor(
    private readonly limits: FrameLimits,
    private readonly options: { chunksOwned?: boolean } = {},
  ) {
    if (limits.frameBytesMin < 1 || limits.frameBytesMax < limits.headerBytes) {
      throw new Error(`FrameSplitter: inconsistent limits ${JSON.stringify(limits)}`);
    }
  }

  /** True once an invalid length was seen: the stream cannot be read any further. */
  get dead(): boolean {
    return this.state === State.Dead;
  }

  /** Bytes held: a frame that has not arrived whole yet, and input held back while paused. */
  get bufferedBytes(): number {
    let n = this.pendingBytes;
    for (const h of this.held) n += h.length;
    return n;
  }

  /** True while the sink has paused the splitter and input is held back. */
  get isPaused(): boolean {
    return this.paused;
  }

  push(chunk: Buffer, sink: FrameSink): void {
    if (this.paused) {
      this.held.push(Buffer.from(chunk)); // copied: the caller may reuse its chunk
      return;
    }
    this.consume(chunk, sink);
  }

  /** Continues with held input after the sink paused; the sink may pause again. */
  resume(sink: FrameSink): void {
    this.paused = false;
    while (!this.paused && this.held.length > 0 && this.state !== State.Dead) {
      this.consume(this.held.shift()!, sink);
    }
  }

  private consume(chunk: Buffer, sink: FrameSink): void {
    let pos = 0;
    const end = chunk.length;
    while (pos < end && this.state !== State.Dead) {
      if (this.state === State.Length) {
        if (this.pendingBytes === 0 && end - pos >= lengthPrefixBytes) {
          this.frameLength = chunk.readInt32BE(pos);
          pos += lengthPrefixBytes;
        } else {
          const take = Math.min(lengthPrefixBytes - this.pendingBytes, end - pos);
          this.gather(chunk.subarray(pos, pos + take));
          pos += take;
          if (this.pendingBytes < lengthPrefixBytes) return;
          this.frameLength = this.takePending().readInt32BE(0);
        }
        if (this.frameLength < this.limits.frameBytesMin || this.frameLength > this.limits.frameBytesMax) {
          this.state = State.Dead;
          sink.invalidLength(this.frameLength);
          return;
        }
        this.state = State.Body;
      }
      // State.Body
      const length = this.frameLength;
      let frame: Buffer;
      if (this.pendingBytes === 0 && end - pos >= length) {
        frame = chunk.subarray(pos, pos + length);
        pos += length;
      } else {
        const take = Math.min(length - this.pendingBytes, end - pos);
        this.gather(chunk.subarray(pos, pos + take));
        pos += take;
        if (this.pendingBytes < length) return;
        frame = this.takePending();
      }
      this.state = State.Length;
      if (frame.length < this.limits.headerBytes) sink.shortFrame(frame.length);
      else if (sink.frame(frame) === false) {
        this.paused = true;
        if (pos < end) this.held.unshift(Buffer.from(chunk.subarray(pos)));
        return;
      }
    }
  }

  private gather(piece: Buffer): void {
    // Copy unless the caller said it never reuses its chunks: it may reuse one after push returns.
    this.pending.push(this.options.chunksOwned ? piece : Buffer.from(piece));
    this.pendingBytes += piece.length;
  }

  private takePending(): Buffer {
    const whole =
      this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    return whole;
  }
}
