/**
 * A lean RESP2 client for Redis: pipelined, replies matched in order, an incremental parser that looks
 * at every byte once (a large XRANGE reply arriving in many chunks is never parsed twice). The stock
 * clients spend several times the CPU per command, which on 2 cores measures the client, not Redis.
 */
import type net from 'node:net';
import { connectLoopback } from './socket.js';

export class RespError extends Error {
  override name = 'RespError';
}

export type RespValue = Buffer | string | number | null | RespError | RespValue[];

interface Waiter {
  left: number;
  error: RespError | undefined;
  last: RespValue;
  resolve(value: RespValue): void;
  reject(error: Error): void;
}

const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);

/** ASCII decimal in buf[start, end). */
function int(buf: Buffer, start: number, end: number): number {
  let neg = false;
  let n = 0;
  let i = start;
  if (buf[i] === 45) {
    neg = true;
    i++;
  }
  for (; i < end; i++) n = n * 10 + (buf[i]! - 48);
  return neg ? -n : n;
}

export class RespClient {
  private buf: Buffer = Buffer.alloc(0);
  private off = 0;
  /** Arrays being filled, kept across chunks. */
  private readonly stack: { arr: RespValue[]; i: number }[] = [];
  private queue: (Waiter | undefined)[] = [];
  private head = 0;
  private dead: Error | undefined;

  static async connect(port: number): Promise<RespClient> {
    let client: RespClient | undefined;
    const socket = await connectLoopback(port, (piece) => client?.onData(piece));
    client = new RespClient(socket);
    return client;
  }

  private constructor(private readonly socket: net.Socket) {
    const fail = (e?: Error) => {
      this.dead = e ?? new Error('redis connection closed');
      for (let i = this.head; i < this.queue.length; i++) this.queue[i]?.reject(this.dead);
      this.queue = [];
      this.head = 0;
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  /** Encodes one command as a RESP array of bulk strings. */
  static encode(args: readonly (string | number | Buffer)[], parts: Buffer[] = []): Buffer[] {
    parts.push(Buffer.from(`*${args.length}\r\n`, 'latin1'));
    for (const a of args) {
      const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a), 'utf8');
      parts.push(Buffer.from(`$${b.length}\r\n`, 'latin1'), b, CRLF);
    }
    return parts;
  }

  /** Sends bytes holding `commands` pre-encoded commands; resolves with the last reply, rejects on any error. */
  sendRaw(bytes: Buffer, commands: number): Promise<RespValue> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.queue.push({ left: commands, error: undefined, last: null, resolve, reject });
      this.socket.write(bytes);
    });
  }

  cmd(...args: (string | number | Buffer)[]): Promise<RespValue> {
    return this.sendRaw(Buffer.concat(RespClient.encode(args)), 1);
  }

  /**
   * `d` lives in the socket's reused read buffer: every value kept past this call is copied (bulk
   * strings, and the unparsed rest of the chunk).
   */
  private onData(d: Buffer): void {
    const buf = this.off >= this.buf.length ? d : Buffer.concat([this.buf.subarray(this.off), d]);
    const stack = this.stack;
    let off = 0;
    for (;;) {
      if (off >= buf.length) break;
      const e = buf.indexOf(13, off);
      if (e < 0 || e + 1 >= buf.length) break;
      const t = buf[off];
      let v: RespValue;
      if (t === 36) {
        // $ bulk string
        const len = int(buf, off + 1, e);
        if (len < 0) {
          v = null;
          off = e + 2;
        } else {
          if (e + 4 + len > buf.length) break;
          v = Buffer.from(buf.subarray(e + 2, e + 2 + len));
          off = e + 4 + len;
        }
      } else if (t === 42) {
        // * array: its elements follow, possibly in later chunks
        const n = int(buf, off + 1, e);
        off = e + 2;
        if (n > 0) {
          stack.push({ arr: new Array(n), i: 0 });
          continue;
        }
        v = n < 0 ? null : [];
      } else if (t === 58) {
        v = int(buf, off + 1, e);
        off = e + 2;
      } else if (t === 43) {
        v = buf.toString('utf8', off + 1, e);
        off = e + 2;
      } else if (t === 45) {
        v = new RespError(buf.toString('utf8', off + 1, e));
        off = e + 2;
      } else {
        this.socket.destroy(new Error(`bad RESP type byte ${t}`));
        return;
      }
      for (;;) {
        if (stack.length === 0) {
          this.deliver(v);
          break;
        }
        const top = stack[stack.length - 1]!;
        top.arr[top.i++] = v;
        if (top.i < top.arr.length) break;
        stack.pop();
        v = top.arr;
      }
    }
    this.buf = off < buf.length ? Buffer.from(buf.subarray(off)) : EMPTY;
    this.off = 0;
  }

  private deliver(v: RespValue): void {
    const w = this.queue[this.head];
    if (!w) {
      this.socket.destroy(new Error('unexpected redis reply'));
      return;
    }
    if (v instanceof RespError && !w.error) w.error = v;
    w.last = v;
    if (--w.left === 0) {
      this.queue[this.head++] = undefined;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      if (w.error) w.reject(w.error);
      else w.resolve(w.last);
    }
  }

  close(): void {
    this.socket.end();
  }
}
