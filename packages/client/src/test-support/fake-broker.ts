/**
 * A broker for tests, in-process on a random port. It decodes every request with protocol's own
 * decoders, so a client that encodes wrongly fails here rather than in production. Either a handler
 * answers each request (answers written in order per connection), or requests queue up for the test
 * to take with nextRequest() and answer, misanswer or ignore as it likes. API_VERSIONS is answered by
 * the fake itself, as a broker from before it (UNSUPPORTED_VERSION: FETCH v1..v2), and not recorded,
 * unless the test asks for it (`apiVersions: 'handled'`): a consumer asks it once per connection.
 */
import net from 'node:net';
import {
  ApiKey,
  decodeRequest,
  ErrorCode,
  encodeErrorResponse,
  FrameSplitter,
  type Request,
  RequestRefusal,
  requestFrameLimits,
} from '@booblik/protocol';
import { AsyncQueue } from './async-queue.js';

/** One client connection as the fake sees it. */
export class FakePeer {
  /** Answers are written in request order: each handler result waits for the one before it. */
  chain: Promise<void> = Promise.resolve();

  constructor(readonly socket: net.Socket) {}

  write(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Cuts the connection (an RST-like loss from the client's side). */
  destroy(): void {
    this.socket.destroy();
  }
}

export interface ReceivedRequest {
  /** Exactly what a real broker would decode from the client's bytes. */
  request: Request;
  /** The whole frame as received (after the length prefix). */
  frame: Buffer;
  peer: FakePeer;
  reply(bytes: Buffer): void;
}

/** Returns the answer to write (in order), or null to send nothing (ack NONE, a dropped request). */
export type FakeHandler = (req: ReceivedRequest) => Buffer | null | Promise<Buffer | null>;

export interface FakeBrokerOptions {
  /** 'handled': API_VERSIONS goes to the handler or the queue like any request. */
  apiVersions?: 'predates' | 'handled';
}

export class FakeBroker {
  /** Requests taken by nobody yet (when there is no handler). */
  private readonly queue = new AsyncQueue<ReceivedRequest>();
  private readonly arrivals = new AsyncQueue<FakePeer>();
  readonly peers: FakePeer[] = [];
  /** Requests that did not decode (answered as a broker would, unless ack NONE). */
  readonly refusals: RequestRefusal[] = [];
  /** Every request decoded, in arrival order. */
  readonly received: Request[] = [];
  private readonly arrived = new AsyncQueue<Request>();

  private constructor(
    private readonly server: net.Server,
    readonly address: string,
  ) {}

  static async start(handler?: FakeHandler, options: FakeBrokerOptions = {}): Promise<FakeBroker> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const broker = new FakeBroker(server, `127.0.0.1:${port}`);
    const handled = options.apiVersions === 'handled';
    server.on('connection', (socket) => broker.accept(socket, handler, handled));
    return broker;
  }

  /** The next request nobody answered yet (only without a handler). */
  nextRequest(): Promise<ReceivedRequest> {
    return this.queue.shift();
  }

  /** The next request to arrive, answered by the handler or not (a way to wait for it in handler mode). */
  nextArrival(): Promise<Request> {
    return this.arrived.shift();
  }

  /** The next connection to arrive (connections already arrived are returned first). */
  nextConnection(): Promise<FakePeer> {
    return this.arrivals.shift();
  }

  /** Cuts every open connection. */
  dropConnections(): void {
    for (const peer of this.peers) peer.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket, handler: FakeHandler | undefined, apiVersionsHandled: boolean): void {
    const peer = new FakePeer(socket);
    this.peers.push(peer);
    this.arrivals.push(peer);
    socket.on('error', () => {}); // a client cutting its side is an event of the test, not a failure
    const splitter = new FrameSplitter(requestFrameLimits);
    const sink = {
      frame: (raw: Buffer) => {
        const frame = Buffer.from(raw);
        let request: Request;
        try {
          request = decodeRequest(frame);
        } catch (error) {
          if (!(error instanceof RequestRefusal)) throw error;
          this.refusals.push(error);
          if (!error.silent) this.inOrder(peer, () => encodeErrorResponse(error.correlationId, error.code));
          return;
        }
        if (request.apiKey === ApiKey.API_VERSIONS && !apiVersionsHandled) {
          this.inOrder(peer, () => encodeErrorResponse(request.correlationId, ErrorCode.UNSUPPORTED_VERSION));
          return;
        }
        this.received.push(request);
        this.arrived.push(request);
        const received: ReceivedRequest = { request, frame, peer, reply: (bytes) => peer.write(bytes) };
        if (handler) this.inOrder(peer, () => handler(received));
        else this.queue.push(received);
      },
      shortFrame: () => this.inOrder(peer, () => encodeErrorResponse(0, ErrorCode.CORRUPT_REQUEST)),
      invalidLength: () => socket.destroy(),
    };
    socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
  }

  private inOrder(peer: FakePeer, answer: () => Buffer | null | Promise<Buffer | null>): void {
    peer.chain = peer.chain.then(async () => {
      const bytes = await answer();
      if (bytes) peer.write(bytes);
    });
  }
}
