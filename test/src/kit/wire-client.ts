import net from 'node:net';
import {
  type AckPolicyValue,
  decodeFetchPayload,
  decodeFetchResponse,
  decodeFetchResponseV5,
  decodeMetadataResponse,
  decodeProduceResponse,
  encodeFetchRequestV2,
  encodeMetadataRequest,
  encodeProduceRequest,
  FrameSplitter,
  type ResponseFrame,
  readResponseFrame,
  responseFrameLimits,
} from '@booblik/protocol';
import { within } from '@booblik/testkit';

/** How long any single answer may take before the check fails instead of hanging. */
export const answerTimeoutMs = 15_000;

/**
 * A bare protocol connection: sends bytes exactly as given and hands back response frames in
 * arrival order. It also notices what a well-behaved broker never does: a response frame of an
 * impossible length, or a connection that ends inside a frame (a response shorter than its own
 * length prefix).
 */
export class WireClient {
  private readonly frames: ResponseFrame[] = [];
  private waiters: ((frame: ResponseFrame | null) => void)[] = [];
  private readonly splitter = new FrameSplitter(responseFrameLimits);
  private nextId = 1;
  closed = false;
  /** What the broker sent that breaks the protocol; empty while all is well. */
  readonly violations: string[] = [];
  readonly closedPromise: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    // A response frame of impossible length ends the connection, as it ends a client's: nothing after
    // it can be framed.
    const broken = (what: string) => {
      this.violations.push(what);
      socket.destroy();
    };
    const sink = {
      frame: (f: Buffer) => this.push(readResponseFrame(Buffer.from(f))),
      shortFrame: (n: number) => broken(`a response frame of ${n} bytes, below 6`),
      invalidLength: (n: number) => broken(`a response frame length of ${n}, outside 6..8388608`),
    };
    socket.on('data', (chunk: Buffer) => this.splitter.push(chunk, sink));
    socket.on('error', () => {});
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        if (this.splitter.bufferedBytes > 0 && !this.splitter.dead) {
          this.violations.push(
            `the connection ended ${this.splitter.bufferedBytes} bytes into a response frame (shorter than its length prefix)`,
          );
        }
        for (const w of this.waiters.splice(0)) w(null);
        resolve();
      }),
    );
  }

  static connect(port: number, host = '127.0.0.1'): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host, noDelay: true }, () => {
        socket.off('error', reject);
        resolve(new WireClient(socket));
      });
      socket.once('error', reject);
    });
  }

  private push(frame: ResponseFrame): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(frame);
    else this.frames.push(frame);
  }

  /** Frames received and not yet taken. */
  get buffered(): number {
    return this.frames.length;
  }

  /** The next response frame, or null if the connection closed first; fails after `timeoutMs`. */
  next(timeoutMs = answerTimeoutMs): Promise<ResponseFrame | null> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve(frame);
    if (this.closed) return Promise.resolve(null);
    let waiter!: (frame: ResponseFrame | null) => void;
    const arrived = new Promise<ResponseFrame | null>((resolve) => {
      waiter = resolve;
      this.waiters.push(resolve);
    });
    return within(arrived, timeoutMs, 'an answer from the broker').catch((error: unknown) => {
      const i = this.waiters.indexOf(waiter);
      if (i >= 0) this.waiters.splice(i, 1);
      throw error;
    });
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  id(): number {
    return this.nextId++;
  }

  /** The next answer, which must carry `correlationId`. */
  async expect(correlationId: number, timeoutMs = answerTimeoutMs): Promise<ResponseFrame> {
    const frame = await this.next(timeoutMs);
    if (frame === null) throw new Error(`connection closed before the answer to ${correlationId}`);
    if (frame.correlationId !== correlationId) {
      throw new Error(
        `answer out of order: expected correlationId ${correlationId}, got ${frame.correlationId}`,
      );
    }
    return frame;
  }

  produce(topic: string, partition: number, ack: AckPolicyValue, records: readonly Uint8Array[]) {
    const id = this.id();
    this.send(encodeProduceRequest(id, { topic, partition, ack, records }));
    return this.expect(id);
  }

  fetch(topic: string, partition: number, fetchOffset: number, maxBytes = 1 << 20, maxWaitMs = 0) {
    const id = this.id();
    this.send(encodeFetchRequestV2(id, { topic, partition, fetchOffset, maxBytes, maxWaitMs, minBytes: 0 }));
    return this.expect(id, answerTimeoutMs + maxWaitMs);
  }

  metadata(...topics: string[]) {
    const id = this.id();
    this.send(encodeMetadataRequest(id, { topics }));
    return this.expect(id);
  }

  close(): void {
    this.socket.destroy();
  }
}

export const producedOf = (f: ResponseFrame) => decodeProduceResponse(f.body);
export const metadataOf = (f: ResponseFrame) => decodeMetadataResponse(f.body);

/** A FETCH answer decoded the way a client must: payloadBytes checked, every whole record CRC-checked. */
export function fetchedOf(f: ResponseFrame, fetchOffset: number, maxBytes: number, version = 2) {
  const { highWatermark, payload } =
    version === 5 ? decodeFetchResponseV5(f.body) : decodeFetchResponse(f.body);
  const decoded = decodeFetchPayload(payload, { fetchOffset, maxBytes });
  return { highWatermark, ...decoded };
}

/** logStartOffset and highWatermark of one partition, from METADATA. */
export async function offsetsOf(c: WireClient, topic: string, partition: number) {
  const answer = await c.metadata(topic);
  if (answer.errorCode !== 0) throw new Error(`METADATA ${topic}: error ${answer.errorCode}`);
  const p = metadataOf(answer)[0]?.partitions.find((x) => x.partition === partition);
  if (p === undefined) throw new Error(`METADATA: no partition ${topic}-${partition}`);
  if (p.logStartOffset > p.highWatermark) {
    throw new Error(
      `METADATA: ${topic}-${partition} starts at ${p.logStartOffset}, past its high watermark ${p.highWatermark}`,
    );
  }
  return { logStartOffset: p.logStartOffset, highWatermark: p.highWatermark };
}

/**
 * Every record of a partition in [from, to), read with FETCH the way a consumer reads (CRC-checked;
 * a corrupt record throws). `maxBytes` may be small: cut records are asked for again.
 */
export async function readRange(
  c: WireClient,
  topic: string,
  partition: number,
  from: number,
  to: number,
  maxBytes = 1 << 20,
): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = from;
  let ask = maxBytes;
  while (offset < to) {
    const answer = await c.fetch(topic, partition, offset, ask);
    if (answer.errorCode !== 0)
      throw new Error(`FETCH ${topic}-${partition} at ${offset}: error ${answer.errorCode}`);
    const read = fetchedOf(answer, offset, ask);
    if (read.records.length === 0) {
      if (read.recordExceedsMaxBytes || read.truncatedBytes > 0) {
        ask *= 2; // the next record is larger than maxBytes: ask for more
        continue;
      }
      throw new Error(`FETCH ${topic}-${partition} at ${offset}: empty below the high watermark ${to}`);
    }
    for (const r of read.records) out.push(Buffer.from(r));
    offset = read.nextOffset;
    ask = maxBytes;
  }
  return out.slice(0, to - from);
}
