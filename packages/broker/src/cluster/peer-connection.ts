import net from 'node:net';
import {
  type Clock,
  type FrameSink,
  FrameSplitter,
  type InFlight,
  lengthPrefixBytes,
  Pipeline,
  responseFrameLimits,
  systemClock,
} from '@booblik/protocol';

/**
 * The peer's answer: the frame after its length prefix (a view), or null when none will come; then
 * `failure` says why, and `mayHaveArrived` whether the request could have reached the peer (it was
 * written to a connection that had connected), so its effect there is not known.
 */
export type PeerAnswer = (frame: Buffer | null, failure?: string, mayHaveArrived?: boolean) => void;

interface Pending extends InFlight {
  answer: PeerAnswer;
  timeoutMs: number;
}

/**
 * One pipelined connection to another broker: requests written back to back, each under its own
 * correlation id, answers matched by id, one timer for every deadline (see Pipeline). A connection
 * that fails, or whose peer misses a deadline, fails every request on it and is never used again
 * (the pool dials a new one).
 */
export class PeerConnection implements FrameSink {
  private readonly socket: net.Socket;
  private readonly splitter = new FrameSplitter(responseFrameLimits, { chunksOwned: true });
  private readonly pending: Pipeline<Pending>;
  private dead: string | null = null;
  /** Whether the socket ever connected: bytes written before then never reached the peer. */
  private connected = false;

  constructor(
    /** The peer's advertised address: its name in the pool and in failures. */
    readonly address: string,
    private readonly onDead: (connection: PeerConnection) => void,
    /** Where to connect when not `address` itself (booblik.cluster.peer.dial). */
    dialAddress = address,
    private readonly clock: Clock = systemClock,
  ) {
    this.pending = new Pipeline<Pending>(clock, (request) => {
      this.fail(`${this.address}: no answer within ${request.timeoutMs} ms`);
      // Out of the pipeline already, so the failure above did not reach it.
      request.answer(null, this.dead!, this.connected);
    });
    const { host, port } = splitAddress(dialAddress);
    this.socket = net.connect({ host, port, noDelay: true }, () => {
      this.connected = true;
    });
    this.socket.on('data', (chunk: Buffer) => this.splitter.push(chunk, this));
    this.socket.on('error', (error) => this.fail(`${address}: ${error.message}`));
    this.socket.on('close', () => this.fail(`${address}: connection closed`));
  }

  get isDead(): boolean {
    return this.dead !== null;
  }

  /** Requests written and not yet answered. */
  get inflight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request: `pieces` are the whole frame, length prefix included, with bytes 8..12 (the
   * correlation id) rewritten here. `answer` is called once.
   */
  send(pieces: readonly Buffer[], timeoutMs: number, answer: PeerAnswer): void {
    if (this.dead !== null) {
      answer(null, this.dead, false);
      return;
    }
    const correlationId = this.pending.takeCorrelationId();
    pieces[0]!.writeInt32BE(correlationId, lengthPrefixBytes + 4);
    const deadline = this.clock.now() + timeoutMs;
    this.pending.add({ correlationId, deadline, abandoned: false, answer, timeoutMs });
    this.write(pieces);
  }

  private write(pieces: readonly Buffer[]): void {
    if (pieces.length === 1) {
      this.socket.write(pieces[0]!);
      return;
    }
    this.socket.cork();
    for (const piece of pieces) this.socket.write(piece);
    this.socket.uncork();
  }

  /** Sends a request nobody answers (a PRODUCE with ack NONE). */
  sendUnanswered(pieces: readonly Buffer[]): void {
    if (this.dead === null) this.write(pieces);
  }

  close(): void {
    this.fail(`${this.address}: closed`);
  }

  frame(frame: Buffer): void {
    const id = frame.readInt32BE(0);
    const pending = this.pending.take(id);
    if (pending === undefined) {
      this.fail(`${this.address}: answer to unknown correlation id ${id}`);
      return;
    }
    pending.answer(frame);
  }

  shortFrame(): void {
    this.fail(`${this.address}: a frame shorter than a response header`);
  }

  invalidLength(length: number): void {
    this.fail(`${this.address}: invalid frame length ${length}`);
  }

  private fail(reason: string): void {
    if (this.dead !== null) return;
    this.dead = reason;
    this.socket.destroy();
    this.onDead(this);
    this.pending.close((p) => p.answer(null, reason, this.connected));
  }
}

export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  let host = address.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port: Number(address.slice(colon + 1)) };
}
