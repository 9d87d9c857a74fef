/**
 * A lean pipelined booblik client for load generation: requests are pre-encoded frames, answers are
 * matched in order (and their correlationId checked), and nothing is decoded that the caller does not
 * ask for. A large answer (a 1 MiB FETCH) can be handed over piece by piece as it arrives instead of
 * being gathered into one buffer: gathering costs a fresh 1 MiB allocation and a copy per fetch, which
 * on this kind of VM (fresh pages fault in at a few hundred MiB/s) would measure the client, not the
 * broker; likewise every socket read lands in one reused buffer. The full client (`@booblik/client`) gathers, validates arguments, keeps timers and decodes
 * every record.
 */
import type net from 'node:net';
import { errorName, frameBytesMax, responseHeaderBytes } from '@booblik/protocol';
import { connectLoopback, connectLoopbackTls } from './socket.js';

/** Receives an answer's body in pieces, in order; `end` once it is complete. */
export interface BodyStream {
  chunk(piece: Buffer): void;
  end(): void;
}

interface Waiter {
  correlationId: number;
  stream: BodyStream | undefined;
  resolve(body: Buffer): void;
  reject(error: Error): void;
}

/** Length prefix + correlationId + errorCode. */
const HEAD_BYTES = 4 + responseHeaderBytes;
const EMPTY = Buffer.alloc(0);

export class BooblikWire {
  private queue: (Waiter | undefined)[] = [];
  private head = 0;
  private nextId = 1;
  private dead: Error | undefined;
  /** The answer being read: its head (gathered), then its body (streamed or gathered). */
  private readonly headBuf = Buffer.alloc(HEAD_BYTES);
  private headHave = 0;
  private current: Waiter | undefined;
  private bodyLeft = 0;
  private failed: Error | undefined;
  private gathered: Buffer[] = [];

  /** With `tlsCa`, over TLS verified against that CA (PEM). */
  static async connect(port: number, tlsCa?: Buffer): Promise<BooblikWire> {
    let wire: BooblikWire | undefined;
    const onRead = (piece: Buffer) => wire?.onData(piece);
    const socket = await (tlsCa ? connectLoopbackTls(port, tlsCa, onRead) : connectLoopback(port, onRead));
    wire = new BooblikWire(socket);
    return wire;
  }

  private constructor(private readonly socket: net.Socket) {
    const fail = (e?: Error) => {
      this.dead = e ?? new Error('booblik connection closed');
      this.current?.reject(this.dead);
      this.current = undefined;
      for (let i = this.head; i < this.queue.length; i++) this.queue[i]?.reject(this.dead);
      this.queue = [];
      this.head = 0;
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  /**
   * Sends a whole request frame after writing a fresh correlationId into it (bytes 8..11), and
   * resolves with the success body (empty when `stream` took it). The frame must be fresh: the socket
   * may still hold an earlier one.
   */
  send(frame: Buffer, stream?: BodyStream): Promise<Buffer> {
    if (this.dead) return Promise.reject(this.dead);
    const correlationId = this.nextId++ & 0x7fffffff;
    frame.writeInt32BE(correlationId, 8);
    return new Promise((resolve, reject) => {
      this.queue.push({ correlationId, stream, resolve, reject });
      this.socket.write(frame);
    });
  }

  private onData(d: Buffer): void {
    let off = 0;
    while (off < d.length) {
      if (this.current === undefined) {
        const n = Math.min(HEAD_BYTES - this.headHave, d.length - off);
        d.copy(this.headBuf, this.headHave, off, off + n);
        this.headHave += n;
        off += n;
        if (this.headHave < HEAD_BYTES) return;
        this.headHave = 0;
        if (!this.startAnswer()) return;
      }
      const n = Math.min(this.bodyLeft, d.length - off);
      if (n > 0) {
        const piece = d.subarray(off, off + n);
        if (this.failed === undefined) {
          // The read buffer is reused: a streamed piece is used at once, a gathered one is copied.
          if (this.current!.stream) this.current!.stream.chunk(piece);
          else this.gathered.push(Buffer.from(piece));
        }
        this.bodyLeft -= n;
        off += n;
      }
      if (this.bodyLeft === 0) this.finishAnswer();
    }
  }

  /** The head of an answer is in: check it against the oldest request. False when the stream is dead. */
  private startAnswer(): boolean {
    const frameLength = this.headBuf.readInt32BE(0);
    if (frameLength < responseHeaderBytes || frameLength > frameBytesMax) {
      this.socket.destroy(new Error(`response frame length ${frameLength} out of range`));
      return false;
    }
    const w = this.queue[this.head];
    if (!w) {
      this.socket.destroy(new Error('an answer nobody asked for'));
      return false;
    }
    this.queue[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const correlationId = this.headBuf.readInt32BE(4);
    if (correlationId !== w.correlationId) {
      const error = new Error(`answer for correlationId ${correlationId}, expected ${w.correlationId}`);
      w.reject(error);
      this.socket.destroy(error);
      return false;
    }
    const errorCode = this.headBuf.readInt16BE(8);
    this.failed = errorCode === 0 ? undefined : new Error(`refused: ${errorName(errorCode)}`);
    this.current = w;
    this.bodyLeft = frameLength - responseHeaderBytes;
    this.gathered = [];
    return true;
  }

  private finishAnswer(): void {
    const w = this.current!;
    this.current = undefined;
    if (this.failed) {
      w.reject(this.failed);
      return;
    }
    if (w.stream) {
      try {
        w.stream.end();
        w.resolve(EMPTY);
      } catch (e) {
        w.reject(e as Error);
      }
      return;
    }
    const g = this.gathered;
    w.resolve(g.length === 0 ? EMPTY : g.length === 1 ? g[0]! : Buffer.concat(g));
  }

  close(): void {
    this.socket.end();
  }
}
