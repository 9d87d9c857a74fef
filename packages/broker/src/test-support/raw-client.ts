import net from 'node:net';
import tls from 'node:tls';
import {
  decodeFetchPayload,
  decodeFetchResponse,
  decodeFetchResponseV5,
  decodeMetadataResponse,
  decodeProduceResponse,
  encodeApplyRequest,
  encodeApplyRequestV2,
  encodeAuthenticateRequest,
  encodeFetchRequestV2,
  encodeFetchRequestV5,
  encodeListRequest,
  encodeMetadataRequest,
  encodeProduceRequest,
  encodeUsersRequest,
  type FetchRequest,
  FrameSplitter,
  type ProduceRequestInput,
  type ResponseFrame,
  readResponseFrame,
  responseFrameLimits,
  type TopicChange,
  type UsersRequest,
} from '@booblik/protocol';

/**
 * A bare protocol connection for broker tests: sends bytes exactly as given and hands back response
 * frames in arrival order, so a test sees precisely what the broker put on the wire.
 */
export class RawClient {
  private readonly frames: ResponseFrame[] = [];
  private waiters: ((frame: ResponseFrame | null) => void)[] = [];
  private nextId = 1;
  closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    const splitter = new FrameSplitter(responseFrameLimits);
    const sink = {
      frame: (f: Buffer) => this.push(readResponseFrame(Buffer.from(f))),
      shortFrame: (n: number) => socket.destroy(new Error(`broker sent a short frame of ${n} bytes`)),
      invalidLength: (n: number) => socket.destroy(new Error(`broker sent a frame length of ${n}`)),
    };
    socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
    socket.on('error', () => {});
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        for (const w of this.waiters.splice(0)) w(null);
        resolve();
      }),
    );
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host, noDelay: true }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  /** The same over TLS: resolves after the handshake, rejects with the TLS library's error. */
  static connectTls(port: number, options: tls.ConnectionOptions, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ port, host, ...options }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  private push(frame: ResponseFrame): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(frame);
    else this.frames.push(frame);
  }

  /** The next response frame, or null if the connection closed first. */
  next(): Promise<ResponseFrame | null> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve(frame);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  id(): number {
    return this.nextId++;
  }

  async produce(req: ProduceRequestInput): Promise<ResponseFrame> {
    const id = this.id();
    this.send(encodeProduceRequest(id, req));
    return this.expect(id);
  }

  async fetch(req: Partial<FetchRequest> & Pick<FetchRequest, 'topic' | 'partition' | 'fetchOffset'>) {
    const id = this.id();
    this.send(encodeFetchRequestV2(id, { maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 0, ...req }));
    return this.expect(id);
  }

  /** FETCH v5: the same, with the epoch of the last record read. */
  async fetchV5(
    req: Partial<FetchRequest> &
      Pick<FetchRequest, 'topic' | 'partition' | 'fetchOffset'> & { lastEpoch: number },
  ) {
    const id = this.id();
    this.send(encodeFetchRequestV5(id, { maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 0, ...req }));
    return this.expect(id);
  }

  async metadata(...topics: string[]): Promise<ResponseFrame> {
    const id = this.id();
    this.send(encodeMetadataRequest(id, { topics }));
    return this.expect(id);
  }

  /** APPLY v1, or v2 when a change asks for a purge of its store. */
  async apply(changes: TopicChange[], dryRun = false): Promise<ResponseFrame> {
    const id = this.id();
    const purging = changes.some((c) => c.op === 'delete' && c.purgeStore === true);
    this.send((purging ? encodeApplyRequestV2 : encodeApplyRequest)(id, { dryRun, changes }));
    return this.expect(id);
  }

  async list(selector = '', watchRevision = -1, maxWaitMs = 0): Promise<ResponseFrame> {
    const id = this.id();
    this.send(encodeListRequest(id, { selector, watchRevision, maxWaitMs }));
    return this.expect(id);
  }

  async authenticate(mechanism: string, data: string | Buffer): Promise<ResponseFrame> {
    const id = this.id();
    this.send(encodeAuthenticateRequest(id, { mechanism, data: Buffer.from(data) }));
    return this.expect(id);
  }

  async users(req: UsersRequest): Promise<ResponseFrame> {
    const id = this.id();
    this.send(encodeUsersRequest(id, req));
    return this.expect(id);
  }

  async expect(correlationId: number): Promise<ResponseFrame> {
    const frame = await this.next();
    if (frame === null) throw new Error(`connection closed before the answer to ${correlationId}`);
    if (frame.correlationId !== correlationId) {
      throw new Error(
        `answer out of order: expected correlationId ${correlationId}, got ${frame.correlationId}`,
      );
    }
    return frame;
  }

  close(): void {
    this.socket.destroy();
  }
}

export const produced = (f: ResponseFrame) => decodeProduceResponse(f.body);
export const metadataOf = (f: ResponseFrame) => decodeMetadataResponse(f.body);
/** A FETCH v5 answer: its records, with the epoch of those from fetchOffset and where that epoch ends. */
export function fetchedV5(f: ResponseFrame, fetchOffset: number, maxBytes = 1 << 20) {
  const { highWatermark, epoch, epochEndOffset, payload } = decodeFetchResponseV5(f.body);
  const decoded = decodeFetchPayload(payload, { fetchOffset, maxBytes });
  return {
    highWatermark,
    epoch,
    epochEndOffset,
    records: decoded.records.map((r) => Buffer.from(r).toString()),
  };
}

export function fetched(f: ResponseFrame, fetchOffset: number, maxBytes = 1 << 20) {
  const { highWatermark, payload } = decodeFetchResponse(f.body);
  const decoded = decodeFetchPayload(payload, { fetchOffset, maxBytes });
  return { highWatermark, records: decoded.records.map((r) => Buffer.from(r).toString()), payload };
}
