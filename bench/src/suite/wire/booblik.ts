/**
 * A lean pipelined booblik client for load generation: requests are pre-encoded frames, answers are
 * matched in order (and their correlationId checked), and nothing is decoded that the caller does not
 * ask for. The full client (`@booblik/client`) validates arguments, keeps timers and decodes every
 * record; this path keeps the load generator's CPU out of the broker's figures on 2 cores.
 */
import type net from 'node:net';
import {
  errorName,
  type FrameSink,
  FrameSplitter,
  readResponseFrame,
  responseFrameLimits,
} from '@booblik/protocol';
import { connectLoopback } from './socket.js';

interface Waiter {
  correlationId: number;
  resolve(body: Buffer): void;
  reject(error: Error): void;
}

export class BooblikWire implements FrameSink {
  private readonly splitter = new FrameSplitter(responseFrameLimits);
  private queue: (Waiter | undefined)[] = [];
  private head = 0;
  private nextId = 1;
  private dead: Error | undefined;

  static async connect(port: number): Promise<BooblikWire> {
    return new BooblikWire(await connectLoopback(port));
  }

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => this.splitter.push(d, this));
    const fail = (e?: Error) => {
      this.dead = e ?? new Error('booblik connection closed');
      for (let i = this.head; i < this.queue.length; i++) this.queue[i]?.reject(this.dead);
      this.queue = [];
      this.head = 0;
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  /**
   * Sends a whole request frame after writing a fresh correlationId into it (bytes 8..11), and
   * resolves with the success body. The frame must not be reused while queued in the socket.
   */
  send(frame: Buffer): Promise<Buffer> {
    if (this.dead) return Promise.reject(this.dead);
    const correlationId = this.nextId++ & 0x7fffffff;
    frame.writeInt32BE(correlationId, 8);
    return new Promise((resolve, reject) => {
      this.queue.push({ correlationId, resolve, reject });
      this.socket.write(frame);
    });
  }

  /** Sends a frame whose request is never answered (ack NONE). */
  sendUnanswered(frame: Buffer): void {
    this.socket.write(frame);
  }

  frame(frame: Buffer): void {
    const w = this.queue[this.head];
    if (!w) {
      this.socket.destroy(new Error('an answer nobody asked for'));
      return;
    }
    this.queue[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const r = readResponseFrame(frame);
    if (r.correlationId !== w.correlationId) {
      const error = new Error(`answer for correlationId ${r.correlationId}, expected ${w.correlationId}`);
      w.reject(error);
      this.socket.destroy(error);
    } else if (r.errorCode !== 0) w.reject(new Error(`refused: ${errorName(r.errorCode)}`));
    else w.resolve(r.body);
  }

  shortFrame(frameLength: number): void {
    this.socket.destroy(new Error(`response frame of ${frameLength} bytes`));
  }

  invalidLength(frameLength: number): void {
    this.socket.destroy(new Error(`response frame length ${frameLength} out of range`));
  }

  close(): void {
    this.socket.end();
  }
}
