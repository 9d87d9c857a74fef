import net from 'node:net';
import tls from 'node:tls';
import {
  AuthMechanism,
  type Clock,
  decodeAuthenticationFailed,
  ErrorCode,
  encodeAuthenticateRequest,
  errorName,
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

/** What a peer connection authenticates with (security/peer-identity.ts). */
export interface PeerCredentials {
  current(): { token: string; expiresAtMs: number };
  readonly wallNowMs: number;
}

/** How this broker reaches its peers when the cluster is secured: TLS (asked at each dial, so a reloaded certificate is used) and its token. */
export interface PeerSecurity {
  identity: PeerCredentials | null;
  /** This broker's certificate and key (presented as a client certificate) and the CA peers' certificates chain to; null: plaintext. */
  tls: () => tls.ConnectionOptions | null;
}

export const plaintextPeers: PeerSecurity = { identity: null, tls: () => null };

/** A peer answers AUTHENTICATE at once; one that does not is not one to send writes to. */
const AUTHENTICATE_TIMEOUT_MS = 5000;
/** A token this close to its end is replaced before the next request. */
const TOKEN_RENEW_BEFORE_MS = 5 * 60 * 1000;

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
  /** When the token this connection authenticated with expires (Unix ms); a new one is sent before. */
  private authenticatedUntilMs = 0;
  /** This broker's token, when the cluster authenticates (a keys file): sent before anything else. */
  private readonly identity: PeerCredentials | null;

  constructor(
    /** The peer's advertised address: its name in the pool and in failures. */
    readonly address: string,
    private readonly onDead: (connection: PeerConnection) => void,
    /** Where to connect when not `address` itself (booblik.cluster.peer.dial). */
    dialAddress = address,
    private readonly clock: Clock = systemClock,
    security: PeerSecurity = plaintextPeers,
  ) {
    this.identity = security.identity;
    this.pending = new Pipeline<Pending>(clock, (request) => {
      this.fail(`${this.address}: no answer within ${request.timeoutMs} ms`);
      // Out of the pipeline already, so the failure above did not reach it.
      request.answer(null, this.dead!, this.connected);
    });
    const { host, port } = splitAddress(dialAddress);
    const secure = security.tls();
    const connected = () => {
      this.connected = true;
    };
    this.socket =
      secure === null
        ? net.connect({ host, port, noDelay: true }, connected)
        : connectPeerTls(host, port, secure, connected);
    if (secure !== null) this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.splitter.push(chunk, this));
    this.socket.on('error', (error) => this.fail(`${address}: ${error.message}`));
    this.socket.on('close', () => this.fail(`${address}: connection closed`));
    if (this.identity !== null) this.authenticate(this.identity);
  }

  /**
   * Sends this broker's token ahead of what follows: the peer reads nothing behind an AUTHENTICATE
   * until it is done, so every request after it is judged as this broker. A refusal ends the
   * connection, naming why.
   */
  private authenticate(identity: PeerCredentials): void {
    const { token, expiresAtMs } = identity.current();
    this.authenticatedUntilMs = expiresAtMs;
    const frame = encodeAuthenticateRequest(0, { mechanism: AuthMechanism.TOKEN, data: Buffer.from(token) });
    this.sendNow([frame], AUTHENTICATE_TIMEOUT_MS, (answer) => {
      if (answer === null) return; // the connection failed: every request on it learns so
      const code = answer.readInt16BE(4);
      if (code === ErrorCode.NONE) return;
      const reason =
        code === ErrorCode.AUTHENTICATION_FAILED
          ? `: ${decodeAuthenticationFailed(answer.subarray(6)).reason}`
          : '';
      this.fail(`${this.address}: refused this broker's token (${errorName(code)}${reason})`);
    });
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
    // A live connection's token is replaced before it expires, in line, so nothing is refused for it.
    if (
      this.identity !== null &&
      this.identity.wallNowMs >= this.authenticatedUntilMs - TOKEN_RENEW_BEFORE_MS
    )
      this.authenticate(this.identity);
    this.sendNow(pieces, timeoutMs, answer);
  }

  private sendNow(pieces: readonly Buffer[], timeoutMs: number, answer: PeerAnswer): void {
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
    if (
      this.identity !== null &&
      this.identity.wallNowMs >= this.authenticatedUntilMs - TOKEN_RENEW_BEFORE_MS
    )
      this.authenticate(this.identity);
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

/** A TLS dial to a peer: its certificate checked against the cluster's CA for the host dialled (an IP against its IP SANs). */
export function connectPeerTls(
  host: string,
  port: number,
  secure: tls.ConnectionOptions,
  onConnect?: () => void,
): tls.TLSSocket {
  return tls.connect(
    { host, port, ...secure, ...(net.isIP(host) === 0 ? { servername: host } : {}) },
    onConnect,
  );
}

export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  let host = address.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port: Number(address.slice(colon + 1)) };
}
