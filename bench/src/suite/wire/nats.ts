/**
 * A lean NATS client for JetStream, speaking the core protocol (INFO, CONNECT, PUB, SUB, MSG, HMSG,
 * PING, PONG) and JetStream through its wire API: a PUB to the stream's subject with a reply inbox is
 * what `js.publish` sends; `$JS.API.*` requests manage streams and consumers; a pull consumer is read
 * with `MSG.NEXT` batches. The stock nats.js client spends ~70 µs of CPU per publish (an Error object
 * per request, among others): on 2 cores it, not the server, would set the pace.
 */
import crypto from 'node:crypto';
import type net from 'node:net';
import { connectLoopback } from './socket.js';

interface Batch {
  left: number;
  error: Error | undefined;
  last: Buffer;
  resolve(last: Buffer): void;
  reject(error: Error): void;
}

export interface PullResult {
  messages: number;
  bytes: number;
  /** A status such as 404 (no messages) or 408 (request expired) that ended the pull early. */
  status: string | undefined;
}

interface Pull extends PullResult {
  want: number;
  onMessage: ((data: Buffer) => void) | undefined;
  resolve(result: PullResult): void;
  reject(error: Error): void;
}

interface MsgHead {
  subject: string;
  sid: string;
  headerBytes: number;
  totalBytes: number;
}

const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);

export class NatsClient {
  private buf: Buffer = Buffer.alloc(0);
  private off = 0;
  private msg: MsgHead | undefined;
  private dead: Error | undefined;
  private readonly inbox: string;
  private readonly pullInbox: string;
  private readonly batches = new Map<string, Batch>();
  private nextBatch = 1;
  private pongs: { resolve(): void; reject(e: Error): void }[] = [];
  private pull: Pull | undefined;
  private onInfo: (() => void) | undefined;

  static async connect(port: number): Promise<NatsClient> {
    let client: NatsClient | undefined;
    const socket = await connectLoopback(port, (piece) => client?.onData(piece));
    const c = new NatsClient(socket);
    client = c;
    await new Promise<void>((resolve, reject) => {
      c.onInfo = resolve;
      socket.once('error', reject);
    });
    socket.write(
      'CONNECT {"verbose":false,"pedantic":false,"tls_required":false,"name":"bench","lang":"node-lean",' +
        `"version":"0","protocol":1,"headers":true,"no_responders":true}\r\n` +
        `SUB ${c.inbox}> 1\r\nSUB ${c.pullInbox}> 2\r\n`,
    );
    await c.ping();
    return c;
  }

  private constructor(private readonly socket: net.Socket) {
    const id = crypto.randomBytes(8).toString('hex');
    this.inbox = `_INBOX.${id}.`;
    this.pullInbox = `_PULL.${id}.`;
    const fail = (e?: Error) => {
      this.dead = e ?? new Error('nats connection closed');
      for (const b of this.batches.values()) b.reject(this.dead);
      this.batches.clear();
      for (const p of this.pongs) p.reject(this.dead);
      this.pongs = [];
      this.pull?.reject(this.dead);
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  ping(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pongs.push({ resolve, reject });
      this.socket.write('PING\r\n');
    });
  }

  /**
   * Publishes every payload to `subject` with one shared reply inbox and resolves with the last reply
   * once all have answered: for a JetStream subject, k publishes in flight and every PubAck awaited.
   */
  publishBatch(subject: string, payloads: readonly Buffer[]): Promise<Buffer> {
    if (this.dead) return Promise.reject(this.dead);
    const id = String(this.nextBatch++);
    const head = `PUB ${subject} ${this.inbox}${id} `;
    const parts: Buffer[] = [];
    for (const p of payloads) parts.push(Buffer.from(`${head}${p.length}\r\n`, 'latin1'), p, CRLF);
    return new Promise((resolve, reject) => {
      this.batches.set(id, { left: payloads.length, error: undefined, last: CRLF, resolve, reject });
      this.socket.write(Buffer.concat(parts));
    });
  }

  /** A JetStream API request with a JSON body; throws the API's error. */
  async request(subject: string, body?: unknown): Promise<Record<string, unknown>> {
    const payload = Buffer.from(body === undefined ? '' : JSON.stringify(body));
    const reply = JSON.parse((await this.publishBatch(subject, [payload])).toString()) as Record<
      string,
      unknown
    >;
    if (reply.error) throw new Error(`${subject}: ${JSON.stringify(reply.error)}`);
    return reply;
  }

  /**
   * Asks a pull consumer for up to `batch` messages, waiting at most `expiresMs`; one pull in flight.
   * Resolves when `batch` arrived or a status (timeout, no messages) ended the request.
   */
  pullNext(
    stream: string,
    consumer: string,
    batch: number,
    expiresMs: number,
    onMessage?: (data: Buffer) => void,
  ): Promise<PullResult> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.pull = { want: batch, messages: 0, bytes: 0, status: undefined, onMessage, resolve, reject };
      const body = Buffer.from(JSON.stringify({ batch, expires: Math.round(expiresMs * 1e6) }));
      this.socket.write(
        Buffer.concat([
          Buffer.from(
            `PUB $JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer} ${this.pullInbox}1 ${body.length}\r\n`,
            'latin1',
          ),
          body,
          CRLF,
        ]),
      );
    });
  }

  /**
   * `d` lives in the socket's reused read buffer: what is kept past this call is copied (the last
   * reply of a batch, and the unparsed rest of the chunk); a pulled message is handed over during it.
   */
  private onData(d: Buffer): void {
    this.buf = this.off >= this.buf.length ? d : Buffer.concat([this.buf.subarray(this.off), d]);
    this.off = 0;
    const buf = this.buf;
    for (;;) {
      const m = this.msg;
      if (m) {
        if (buf.length - this.off < m.totalBytes + 2) break;
        const header = m.headerBytes > 0 ? buf.subarray(this.off, this.off + m.headerBytes) : undefined;
        const data = buf.subarray(this.off + m.headerBytes, this.off + m.totalBytes);
        this.off += m.totalBytes + 2;
        this.msg = undefined;
        this.dispatch(m, header, data);
        continue;
      }
      const e = buf.indexOf(10, this.off);
      if (e < 0) break;
      const line = buf.toString('latin1', this.off, e - 1);
      this.off = e + 1;
      const c = line.charCodeAt(0);
      if (c === 77 || c === 72) {
        // MSG <subject> <sid> [reply] <#bytes>  |  HMSG <subject> <sid> [reply] <#header> <#total>
        const p = line.split(' ');
        if (p[0] === 'MSG') {
          this.msg = { subject: p[1]!, sid: p[2]!, headerBytes: 0, totalBytes: Number(p[p.length - 1]) };
        } else {
          this.msg = {
            subject: p[1]!,
            sid: p[2]!,
            headerBytes: Number(p[p.length - 2]),
            totalBytes: Number(p[p.length - 1]),
          };
        }
      } else if (line === 'PING') this.socket.write('PONG\r\n');
      else if (line === 'PONG') this.pongs.shift()?.resolve();
      else if (line.startsWith('INFO')) {
        this.onInfo?.();
        this.onInfo = undefined;
      } else if (line.startsWith('-ERR')) process.stderr.write(`# nats server error: ${line}\n`);
    }
    this.buf = this.off < buf.length ? Buffer.from(buf.subarray(this.off)) : EMPTY;
    this.off = 0;
  }

  private dispatch(m: MsgHead, header: Buffer | undefined, data: Buffer): void {
    // "NATS/1.0 408 Request Timeout": the status code sits at bytes 9..12 of the header block.
    const status = header ? header.toString('latin1', 9, 12) : '';
    if (m.sid === '2') {
      const f = this.pull;
      if (!f) return;
      if (status && data.length === 0) {
        f.status = status;
        this.pull = undefined;
        f.resolve(f);
        return;
      }
      f.messages++;
      f.bytes += data.length;
      f.onMessage?.(data);
      if (f.messages >= f.want) {
        this.pull = undefined;
        f.resolve(f);
      }
      return;
    }
    const key = m.subject.slice(this.inbox.length);
    const b = this.batches.get(key);
    if (!b) return;
    if (status === '503') b.error = new Error('no responders (is the stream missing?)');
    else if (!b.error && data.indexOf('"error"') >= 0) b.error = new Error(`publish: ${data.toString()}`);
    if (--b.left === 0) {
      b.last = Buffer.from(data);
      this.batches.delete(key);
      if (b.error) b.reject(b.error);
      else b.resolve(b.last);
    }
  }

  close(): void {
    this.socket.end();
  }
}
