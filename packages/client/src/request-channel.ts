/**
 * The pipelined half of a connection to a broker: requests written at once, answers matched by
 * order, with the correlationId of every answer checked against the request at the head of the
 * queue. An answer out of step means the stream can no longer be trusted, so the request fails
 * loudly and the connection closes, failing everything else pending.
 *
 *   open ──close()──> draining ──(no answer pending)──> closed
 *     └──────────(failure: lost socket, protocol error, timeout)──────────┘
 */
import type net from 'node:net';
import {
  CorruptRecordError,
  type FrameReader,
  type FrameSink,
  frameBytesMax,
  type InFlight,
  lengthPrefixBytes,
  Pipeline,
  ProtocolError,
  readResponseFrame,
  responseFrameLimits,
} from '@booblik/protocol';
import { checkCount } from './checks.js';
import { type Clock, systemClock } from './clock.js';
import {
  AbortError,
  ConnectionClosedError,
  CredentialsExpiredError,
  type RequestSubject,
  RequestTooLargeError,
  TimeoutError,
  WrongPortError,
} from './errors.js';
import { CLOSE_WAIT_MS, DEFAULT_REQUEST_TIMEOUT_MS, HTTP_AS_FRAME_LENGTH } from './limits.js';
import type { ConnectOptions } from './request-options.js';
import { StateMachine } from './state-machine.js';
import { tlsLossReason } from './tls-options.js';
import { refusalOf } from './topic-errors.js';

/** open ──close()──> draining ──> closed, or closed at once on a failure. */
export type ConnectionState = 'open' | 'draining' | 'closed';

interface Pending extends InFlight {
  /** What is asked, for errors: `FETCH orders/0 at 12`. */
  what: string;
  /** The topics and partition asked about, named again in a refusal. */
  subject: RequestSubject;
  decode(body: Buffer): unknown;
  /** The error for a refusal (its body carries details for some codes). */
  refusal(code: number, body: Buffer): Error;
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** How long it had before failing with TimeoutError (its deadline is on the connection's clock). */
  timeoutMs: number;
  detachSignal: (() => void) | undefined;
  /** For a request that changes something: what losing its answer leaves unknown. */
  unknownEffect: string | undefined;
}

/** A connection's requests and answers; Connection adds a method per kind of request. */
export abstract class RequestChannel {
  /** `host:port` as connected to; a consumer dials it again after a loss. */
  readonly address: string;
  /** Resolves when the connection is closed: with the failure that closed it, or undefined after close(). */
  readonly closed: Promise<Error | undefined>;

  private readonly machine = new StateMachine<ConnectionState>('connection', 'open', {
    open: ['draining', 'closed'],
    draining: ['closed'],
    closed: [],
  });
  /** Requests in flight, in the order written, with the one timer for their deadlines. */
  private readonly pending: Pipeline<Pending>;
  private readonly sink: FrameSink;
  protected readonly clock: Clock;
  protected readonly requestTimeoutMs: number;
  /** Whether any answer arrived: an HTTP reply can only be the very first bytes. */
  private answered = false;
  private closeReason: Error | undefined;
  private markClosed!: (reason: Error | undefined) => void;

  protected constructor(
    private readonly socket: net.Socket,
    private readonly frames: FrameReader,
    address: string,
    /** Kept so that whoever dials again (a consumer) uses the same settings. */
    readonly options: ConnectOptions,
  ) {
    this.address = address;
    this.clock = options.clock ?? systemClock;
    this.pending = new Pipeline<Pending>(this.clock, (entry) => this.onTimeout(entry));
    this.requestTimeoutMs = checkCount(
      'requestTimeoutMs',
      options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      1,
    );
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    this.sink = {
      frame: (frame: Buffer) => this.onFrame(frame),
      // Response limits make every frame at least a header long, so this cannot happen; if it did,
      // the stream would be out of step all the same.
      shortFrame: (length: number) => this.fail(new ProtocolError(`response frame of ${length} bytes`)),
      invalidLength: (length: number) =>
        this.fail(
          !this.answered && length === HTTP_AS_FRAME_LENGTH
            ? new WrongPortError(this.address)
            : new ProtocolError(
                `response frame length ${length}, expected ${responseFrameLimits.frameBytesMin}..${frameBytesMax}`,
              ),
        ),
    };
    socket.on('error', (error) => {
      this.closeReason ??= error;
    });
    socket.on('close', () => {
      if (this.machine.is('closed')) return;
      const cause = this.closeReason;
      this.fail(
        new ConnectionClosedError(
          this.address,
          cause
            ? `connection to ${this.address} lost: ${tlsLossReason(cause) ?? cause.message}`
            : `connection to ${this.address} closed by the broker${this.closedUnanswered()}`,
          { cause },
        ),
      );
    });
  }

  /** A TLS broker that does not take a client certificate may close without an alert, before any answer. */
  private closedUnanswered(): string {
    const tls = this.options.tls;
    const withCertificate = typeof tls === 'object' && tls.cert !== undefined;
    return withCertificate && !this.answered
      ? " before any answer: did it refuse this client's certificate? (the broker's log says)"
      : '';
  }

  get state(): ConnectionState {
    return this.machine.state;
  }

  /** Requests sent and not yet answered (abandoned ones included: their answers are still due). */
  get pendingRequests(): number {
    return this.pending.size;
  }
  /**
   * Stops taking requests, waits for the answers still due (each bounded by its timeout; abandoned
   * ones are not waited for), then ends the socket so that everything written (ack NONE included)
   * reaches the broker.
   */
  async close(): Promise<void> {
    if (this.machine.is('open')) {
      this.machine.to('draining');
      this.finishDrain();
    }
    await this.closed;
  }

  /** Cuts the connection now, failing everything pending with ConnectionClosedError. */
  destroy(reason?: Error): void {
    this.fail(reason ?? new ConnectionClosedError(this.address, `connection to ${this.address} destroyed`));
  }

  /**
   * Set by a connection whose token comes from a provider: fetches a fresh token and authenticates
   * again on this connection (one attempt shared by every request refused meanwhile).
   */
  protected refreshCredentials: (() => Promise<void>) | undefined;

  /** Sends a request; one refused with CREDENTIALS_EXPIRED is sent once more after a refresh, if there is one. */
  protected request<T>(
    what: string,
    subject: RequestSubject,
    build: (correlationId: number) => Buffer,
    decode: (body: Buffer) => T,
    timeoutMs: number,
    signal?: AbortSignal,
    toRefusal?: (code: number, body: Buffer) => Error,
    unknownEffect?: string,
  ): Promise<T> {
    const send = () =>
      this.requestOnce(what, subject, build, decode, timeoutMs, signal, toRefusal, unknownEffect);
    const refresh = this.refreshCredentials;
    if (!refresh) return send();
    return send().catch(async (error: unknown) => {
      // A refusal: nothing of the request took effect, so sending it again cannot apply it twice.
      if (!(error instanceof CredentialsExpiredError)) throw error;
      await refresh();
      return send();
    });
  }

  /** Sends a request and waits for its answer (AUTHENTICATE itself goes this way: it is never refused as expired). */
  protected requestOnce<T>(
    what: string,
    subject: RequestSubject,
    build: (correlationId: number) => Buffer,
    decode: (body: Buffer) => T,
    timeoutMs: number,
    signal?: AbortSignal,
    toRefusal?: (code: number, body: Buffer) => Error,
    unknownEffect?: string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const refusal = this.refuseNew(what, signal);
      if (refusal) {
        reject(refusal);
        return;
      }
      const correlationId = this.pending.takeCorrelationId();
      const frame = build(correlationId);
      if (frame.length - lengthPrefixBytes > frameBytesMax) {
        reject(new RequestTooLargeError(what, frame.length - lengthPrefixBytes, frameBytesMax));
        return;
      }
      const entry: Pending = {
        correlationId,
        what,
        subject,
        decode,
        refusal: toRefusal ?? ((code, body) => refusalOf(code, what, body, subject)),
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: this.clock.now() + timeoutMs,
        timeoutMs,
        abandoned: false,
        detachSignal: undefined,
        unknownEffect,
      };
      if (signal) {
        const onAbort = () => {
          if (entry.abandoned) return;
          entry.abandoned = true;
          reject(new AbortError(what, { cause: signal.reason }));
          this.finishDrain(); // a close() waiting only for this answer need not wait any more
        };
        signal.addEventListener('abort', onAbort, { once: true });
        entry.detachSignal = () => signal.removeEventListener('abort', onAbort);
      }
      this.pending.add(entry);
      this.socket.write(frame);
    });
  }

  /** Writes a request the broker never answers (PRODUCE with ack NONE): no slot in the answer queue. */
  protected sendUnanswered(what: string, build: (correlationId: number) => Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const refusal = this.refuseNew(what);
      if (refusal) {
        reject(refusal);
        return;
      }
      const frame = build(this.pending.takeCorrelationId());
      if (frame.length - lengthPrefixBytes > frameBytesMax) {
        reject(new RequestTooLargeError(what, frame.length - lengthPrefixBytes, frameBytesMax));
        return;
      }
      // Resolving once the bytes are handed to the kernel gives NONE natural backpressure.
      this.socket.write(frame, (error) => {
        if (error) {
          reject(
            new ConnectionClosedError(this.address, `${what}: not sent, connection to ${this.address} lost`, {
              cause: error,
            }),
          );
        } else {
          resolve();
        }
      });
    });
  }

  private refuseNew(what: string, signal?: AbortSignal): Error | undefined {
    if (signal?.aborted) return new AbortError(what, { cause: signal.reason });
    if (this.machine.is('open')) return undefined;
    return new ConnectionClosedError(this.address, `${what}: connection to ${this.address} is closed`, {
      cause: this.closeReason,
    });
  }

  /** @internal The socket read `bytes` into the reader's last target (called by `dial` only). */
  onRead(bytes: number): void {
    this.frames.written(bytes, this.sink);
  }

  private onFrame(frame: Buffer): void {
    if (this.machine.is('closed')) return;
    this.answered = true;
    // The broker answers a connection in request order: the answer is the oldest request's.
    const head = this.pending.takeOldest();
    if (!head) {
      this.fail(new ProtocolError('an answer arrived with no request waiting for it'));
      return;
    }
    head.detachSignal?.();
    const response = readResponseFrame(frame);
    if (response.correlationId !== head.correlationId) {
      const error = new ProtocolError(
        `${head.what}: the answer carries correlationId ${response.correlationId}, expected ` +
          `${head.correlationId}; answers are out of step, so the connection is closed`,
      );
      if (!head.abandoned) head.reject(error);
      this.fail(error);
      return;
    }
    if (response.errorCode !== 0) {
      let refusal: Error;
      try {
        refusal = head.refusal(response.errorCode, response.body);
      } catch (error) {
        if (!head.abandoned) head.reject(error as Error);
        this.fail(error as Error);
        return;
      }
      if (!head.abandoned) head.reject(refusal);
    } else {
      let value: unknown;
      try {
        value = head.decode(response.body);
      } catch (error) {
        // A corrupt record is a fact about stored bytes, not about the stream: the connection is fine.
        if (error instanceof CorruptRecordError) {
          if (!head.abandoned) head.reject(error);
          this.finishDrain();
          return;
        }
        const wrapped =
          error instanceof ProtocolError
            ? error
            : new ProtocolError(`${head.what}: the answer does not decode`, { cause: error });
        if (!head.abandoned) head.reject(wrapped);
        this.fail(wrapped);
        return;
      }
      if (!head.abandoned) head.resolve(value);
    }
    this.finishDrain();
  }

  /**
   * No answer in time means the broker or the path to it is stuck; as answers come in order, every
   * later request is stuck behind this one. So the request fails and the connection closes. (The
   * pipeline skips abandoned requests: this one is still awaited.)
   */
  private onTimeout(entry: Pending): void {
    const error = new TimeoutError(entry.what, entry.timeoutMs, entry.unknownEffect);
    entry.detachSignal?.();
    entry.reject(error);
    this.fail(error);
  }

  /** While draining, ends the socket once the last answer anyone still waits for is in. */
  private finishDrain(): void {
    if (!this.machine.is('draining') || this.pending.anyWaiting) return;
    this.machine.to('closed');
    // Only abandoned requests are left: their answers are not read any more.
    this.pending.close((entry) => entry.detachSignal?.());
    const cut = this.clock.setTimeout(() => this.socket.destroy(), CLOSE_WAIT_MS);
    this.socket.once('close', () => {
      this.clock.clearTimeout(cut);
      this.markClosed(undefined);
    });
    this.socket.end();
  }

  /** Closes at once: every pending request fails with ConnectionClosedError carrying `reason`. */
  private fail(reason: Error): void {
    if (this.machine.is('closed')) return;
    this.machine.to('closed');
    this.closeReason = reason;
    this.socket.destroy();
    const failed =
      reason instanceof ConnectionClosedError
        ? reason
        : new ConnectionClosedError(this.address, `connection to ${this.address} closed: ${reason.message}`, {
            cause: reason,
          });
    this.pending.close((entry) => {
      entry.detachSignal?.();
      if (entry.abandoned) return;
      // Sent, answer lost: a PRODUCE or APPLY may have taken effect, and its error says so (an HTTP
      // server took nothing).
      entry.reject(
        entry.unknownEffect === undefined || reason instanceof WrongPortError
          ? failed
          : new ConnectionClosedError(
              this.address,
              `${entry.what}: connection to ${this.address} lost before the answer: ${entry.unknownEffect}`,
              { cause: failed, outcomeUnknown: true },
            ),
      );
    });
    this.markClosed(failed);
  }
}
