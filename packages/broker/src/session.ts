import type { Socket } from 'node:net';
import {
  AckPolicy,
  ApiKey,
  apiRowOf,
  decodeRequest,
  ErrorCode,
  type FrameSink,
  FrameSplitter,
  NEVER_EXPIRES,
  type Request,
  RequestRefusal,
  requestFrameLimits,
  unrefTimer,
} from '@booblik/protocol';
import type { ApiContext } from './api/context.js';
import type { HoldEnd } from './api/fetch.js';
import { apiHandlers, type RequestSource } from './api/handlers.js';
import type { UnansweredSink } from './api/produce.js';
import { refuse, refuseSilently } from './api/refusal.js';
import { authenticationTimeoutMs, connectionPendingWriteBytesMax, shutdownGraceMs } from './limits.js';
import { type AnswerSink, discardReply, type Reply } from './reply.js';
import { ConnectionAuth } from './security/connection-auth.js';
import { tlsPrincipalOf } from './tls/principal.js';

/** One answer slot, in request order. Filled when its handler is done; written when all before it are. */
class Slot implements AnswerSink {
  reply: Reply | null = null;
  done = false;

  constructor(
    private readonly session: Session,
    /** What the request may hold until its answer is written (see `inflightBytes`). */
    readonly bytes: number,
  ) {}

  deliver(reply: Reply): void {
    this.reply = reply;
    this.done = true;
    this.session.writeReadyAnswers();
  }

  broken(error: unknown): void {
    this.session.handlerFailed(error);
  }
}

/** An ack NONE PRODUCE's frame, counted against the budget until its batch is written or refused. */
class HeldFrame implements UnansweredSink {
  constructor(
    private readonly session: Session,
    private readonly bytes: number,
  ) {}

  settled(): void {
    this.session.releaseHeld(this.bytes);
  }
}

enum SessionState {
  Open,
  /** Not reading new requests (shutdown); answering what is in flight. */
  Draining,
  Closed,
}

/**
 * One client connection: a frame splitter, requests dispatched as they arrive (pipelining), answers
 * written strictly in request order. Reading stops while too many requests are unanswered or too many
 * answer bytes sit unread in the socket, so a client that never reads cannot grow the broker's memory.
 */
export class Session implements FrameSink, RequestSource {
  private readonly splitter = new FrameSplitter(requestFrameLimits);
  private readonly slots: Slot[] = [];
  private slotsHead = 0;
  private state = SessionState.Open;
  private paused = false;
  private readonly endCallbacks = new Set<(reason: HoldEnd) => void>();
  private drained: (() => void) | null = null;
  private corked = false;
  /**
   * Bytes the requests in flight may hold until their answers are written: a PRODUCE its frame, a
   * FETCH the answer it asked for (up to one frame). Counted against the same budget as unread
   * answers, because an answer in flight is written the moment it is ready, read or not.
   */
  private inflightBytes = 0;
  private cachedEndpoint: string | undefined;
  /** Who this connection is: anonymous until AUTHENTICATE (or its TLS client certificate) says. */
  readonly auth: ConnectionAuth;
  /**
   * An AUTHENTICATE is being answered: the requests behind it wait unread, so each is judged as
   * the connection is once it is done (a client may pipeline its first requests behind it).
   */
  private authenticating = false;
  private readonly untrack: () => void;
  /** The subject CN of the client certificate this connection was verified with; null without one. */
  readonly tlsPrincipal: string | null;

  constructor(
    readonly socket: Socket,
    private readonly ctx: ApiContext,
    private readonly maxInflight: number,
    private readonly onClosed: (session: Session) => void,
  ) {
    this.tlsPrincipal = tlsPrincipalOf(socket);
    this.auth = new ConnectionAuth(socket.remoteAddress ?? '');
    // A verified client certificate says who the connection is (mTLS): no AUTHENTICATE needed.
    if (this.tlsPrincipal !== null) {
      this.auth.move({
        kind: 'authenticated',
        principal: this.tlsPrincipal,
        mechanism: 'TLS',
        expiresAtMs: NEVER_EXPIRES,
        broker: false,
      });
    }
    this.untrack = ctx.security.track({ auth: this.auth, close: () => socket.destroy() });
    if (ctx.security.required && this.tlsPrincipal === null)
      this.closeUnlessAuthenticatedIn(authenticationTimeoutMs);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.splitter.push(chunk, this));
    socket.on('drain', () => this.updateFlow());
    socket.on('error', () => {}); // 'close' follows; a reset by the peer is not the broker's error
    socket.on('close', () => this.closed());
  }

  /** This broker as the client reached it (`host:port`): the route LIST and METADATA v2 answer. */
  get endpoint(): string {
    if (this.cachedEndpoint === undefined) {
      const host = this.socket.localAddress ?? '';
      this.cachedEndpoint = `${host.includes(':') ? `[${host}]` : host}:${this.socket.localPort ?? 0}`;
    }
    return this.cachedEndpoint;
  }

  get inflight(): number {
    return this.slots.length - this.slotsHead;
  }

  // FrameSink: called by the splitter for each unit of the stream.

  frame(frame: Buffer): boolean {
    this.dispatch(frame);
    // Returning false stops the splitter at this frame: the rest of the chunk waits with the socket.
    return !this.overloaded();
  }

  /** Decodes a request and runs it through its API's handler (api/handlers.ts). */
  private dispatch(frame: Buffer): void {
    let request: Request;
    try {
      request = decodeRequest(frame);
    } catch (error) {
      if (!(error instanceof RequestRefusal)) throw error;
      this.ctx.metrics.invalidRequests++;
      if (error.silent) refuseSilently(this.ctx, error.code, error.message);
      else this.answer(refuse(this.ctx, error.correlationId, error.code));
      return;
    }
    this.ctx.metrics.countRequest(request.apiKey);
    const row = this.ctx.security.required ? apiRowOf(request.apiKey)! : null;
    if (row !== null && !row.beforeAuthentication) {
      const code = this.ctx.security.gate(this.auth, row.operation);
      if (code !== null) {
        if (request.apiKey === ApiKey.PRODUCE && (request.body as { ack: number }).ack === AckPolicy.NONE)
          refuseSilently(this.ctx, code, `from ${this.auth.remoteAddress}, not authenticated`);
        else this.answer(refuse(this.ctx, request.correlationId, code));
        return;
      }
    }
    // Every key the table has has a handler: the map's type requires it.
    const handler = apiHandlers[request.apiKey]!;
    if (handler.kind === 'reply') {
      const reply = handler.run(request, this.ctx, this);
      if (request.apiKey === ApiKey.AUTHENTICATE && reply instanceof Promise) this.holdReadingUntil(reply);
      this.answerWhenReady(reply);
      return;
    }
    if (handler.unanswered?.takes(request)) {
      this.inflightBytes += frame.length;
      handler.unanswered.run(request, this.ctx, new HeldFrame(this, frame.length));
      return;
    }
    const slot = this.openSlot(handler.slotBytes(request, frame.length));
    handler.run(request, this.ctx, this, slot);
    if (!slot.done) this.updateFlow();
  }

  shortFrame(): void {
    // The header did not arrive, so there is no correlationId to echo: the spec says 0.
    this.ctx.metrics.invalidRequests++;
    this.answer(refuse(this.ctx, 0, ErrorCode.CORRUPT_REQUEST));
  }

  invalidLength(frameLength: number): void {
    // Nothing after this length can be framed: close this connection only, without answering it.
    this.ctx.metrics.connectionsClosedInvalidLength++;
    this.ctx.noisyLog.warn(
      `closing connection from ${this.socket.remoteAddress}:${this.socket.remotePort}: frame length ${frameLength} outside 1..8388608`,
    );
    // The intact requests before it were taken (a PRODUCE may already be in the log), so their answers
    // are still owed: stop reading, answer what is in flight, then close, as at shutdown. Destroying
    // the socket here dropped those answers (found by the reliability fuzzer). A peer that does not
    // read them is cut off after the grace period.
    const timer = setTimeout(() => this.socket.destroy(), shutdownGraceMs);
    timer.unref();
    this.socket.once('close', () => clearTimeout(timer));
    void this.drain();
  }

  private holdReadingUntil(done: Promise<unknown>): void {
    this.authenticating = true;
    const resume = () => {
      this.authenticating = false;
      this.updateFlow();
    };
    done.then(resume, resume);
  }

  /** A connection that has not said who it is within `ms` is closed: a stranger cannot hold one open. */
  private closeUnlessAuthenticatedIn(ms: number): void {
    const clock = this.ctx.security.clock;
    const timer = clock.setTimeout(() => {
      if (this.auth.principal !== null || this.state === SessionState.Closed) return;
      this.ctx.metrics.connectionsClosedUnauthenticated++;
      this.ctx.noisyLog.warn(
        `closing connection from ${this.auth.remoteAddress}: not authenticated within ${ms} ms`,
      );
      this.socket.destroy();
    }, ms);
    unrefTimer(timer);
    this.socket.once('close', () => clock.clearTimeout(timer));
  }

  // HoldScope: held fetches learn when the connection or the broker goes away.

  onEnd(callback: (reason: HoldEnd) => void): () => void {
    this.endCallbacks.add(callback);
    return () => this.endCallbacks.delete(callback);
  }

  /** An answer ready now: written at once, or after the answers still due before it. */
  private answer(reply: Reply): void {
    if (this.state === SessionState.Closed) return;
    if (this.inflight === 0) {
      this.write(reply);
      return;
    }
    const slot = new Slot(this, 0);
    slot.reply = reply;
    slot.done = true;
    this.slots.push(slot);
    this.flush();
  }

  /** An answer that may still be coming (an APPLY being written, a held LIST): its slot waits for it. */
  private answerWhenReady(reply: Reply | Promise<Reply>): void {
    if (!(reply instanceof Promise)) {
      this.answer(reply);
      return;
    }
    const slot = this.openSlot(0);
    reply.then(
      (ready) => slot.deliver(ready),
      (error: unknown) => slot.broken(error),
    );
    this.updateFlow();
  }

  /**
   * Takes a slot for an answer, in request order: the handler fills it (maybe before it returns), and
   * it is written when all before it are.
   */
  private openSlot(bytes: number): Slot {
    const slot = new Slot(this, bytes);
    this.slots.push(slot);
    this.inflightBytes += bytes;
    return slot;
  }

  /**
   * A handler failure is our bug, not the client's: log it and drop the connection rather than answer
   * out of order or not at all.
   */
  handlerFailed(error: unknown): void {
    this.ctx.logger.error(`request failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
    this.socket.destroy();
  }

  /**
   * An ack NONE PRODUCE takes no answer slot, yet its frame is held until the writer has it on disk:
   * it counts against the budget until then. Uncounted, a NONE producer faster than the disk made
   * the broker queue its frames without limit while a FORCED group waited for fdatasync (found by
   * the reliability suite's overload check).
   */
  releaseHeld(bytes: number): void {
    this.inflightBytes -= bytes;
    this.updateFlow();
  }

  /** Writes every answer whose turn has come (all before it written); called when a slot is filled. */
  writeReadyAnswers(): void {
    if (this.state === SessionState.Closed) {
      // Nobody will read them: hand pooled buffers back.
      while (this.slotsHead < this.slots.length && this.slots[this.slotsHead]!.done) {
        discardReply(this.slots[this.slotsHead]!.reply);
        this.slots[this.slotsHead++] = undefined as unknown as Slot;
      }
      return;
    }
    this.flush();
  }

  private flush(): void {
    while (this.slotsHead < this.slots.length && this.slots[this.slotsHead]!.done) {
      const slot = this.slots[this.slotsHead]!;
      this.slots[this.slotsHead++] = undefined as unknown as Slot;
      this.inflightBytes -= slot.bytes;
      if (slot.reply !== null) this.write(slot.reply);
    }
    if (this.slotsHead > 1024 && this.slotsHead * 2 > this.slots.length) {
      this.slots.splice(0, this.slotsHead);
      this.slotsHead = 0;
    }
    this.updateFlow();
    if (this.inflight === 0 && this.drained) this.drained();
  }

  private write(reply: Reply): void {
    if (this.state === SessionState.Closed) {
      discardReply(reply);
      return;
    }
    // One syscall per answer, and one for all the answers of a turn: while more answers are due on
    // this connection, the socket is corked until they are written or the turn ends; the last one due
    // goes out at once with whatever was held. A lone answer is written uncorked, straight away.
    const moreDue = this.inflight > 0;
    if (Buffer.isBuffer(reply)) {
      if (moreDue) this.holdWrites();
      this.socket.write(reply);
    } else {
      // Pieces of one answer (a FETCH header and file bytes) always leave together.
      if (moreDue) this.holdWrites();
      else if (!this.corked) {
        this.corked = true;
        this.socket.cork();
      }
      if ('release' in reply) {
        // The pooled buffer may be reused only once the socket is done with it: the last write's callback.
        const { pieces, release } = reply;
        for (let i = 0; i < pieces.length - 1; i++) this.socket.write(pieces[i]!);
        this.socket.write(pieces[pieces.length - 1]!, () => release());
      } else for (const piece of reply) this.socket.write(piece);
    }
    if (!moreDue && this.corked) this.releaseWrites();
  }

  private holdWrites(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    process.nextTick(this.releaseAtEndOfTurn);
  }

  private releaseWrites(): void {
    this.corked = false;
    this.socket.uncork();
  }

  private readonly releaseAtEndOfTurn = (): void => {
    if (this.corked) this.releaseWrites();
  };

  /** Stops reading while too much is unanswered or unread; resumes when both are back under their limits. */
  private overloaded(): boolean {
    // Answers in flight count with the unread ones: counting only the unread let a client that never
    // reads make the broker hold maxInflight answers at once (1,024 x 1 MiB FETCHes: a GiB), found by
    // the reliability suite's overload check.
    return (
      this.authenticating ||
      this.inflight >= this.maxInflight ||
      this.inflightBytes + this.socket.writableLength > connectionPendingWriteBytesMax
    );
  }

  private updateFlow(): void {
    if (this.state !== SessionState.Open) return;
    const overloaded = this.overloaded();
    if (overloaded && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!overloaded && (this.paused || this.splitter.isPaused)) {
      this.paused = false;
      this.socket.resume();
      if (this.splitter.isPaused) this.splitter.resume(this);
    }
  }

  /**
   * Graceful end: stop reading, answer held fetches now, wait until every answer is written, then close.
   * Resolves when the socket is done.
   */
  async drain(): Promise<void> {
    if (this.state !== SessionState.Open) return;
    this.state = SessionState.Draining;
    this.socket.pause();
    for (const callback of [...this.endCallbacks]) callback('shutdown');
    if (this.inflight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    await new Promise<void>((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.end();
      // Read on, answering nothing, so the peer's own end is seen: a peer that is a broker draining
      // too has paused its side, and two paused sockets would each wait for the other's close.
      this.socket.removeAllListeners('data');
      this.socket.on('data', () => {});
      this.socket.resume();
    });
  }

  /** Closes at once (the broker is past its grace period). */
  destroy(): void {
    this.socket.destroy();
  }

  private closed(): void {
    if (this.state === SessionState.Closed) return;
    this.state = SessionState.Closed;
    for (const callback of [...this.endCallbacks]) callback('disconnect');
    this.endCallbacks.clear();
    this.untrack();
    this.drained?.();
    this.onClosed(this);
  }
}
