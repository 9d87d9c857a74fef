import type { Socket } from 'node:net';
import {
  ApiKey,
  decodeRequest,
  ErrorCode,
  type FrameSink,
  FrameSplitter,
  RequestRefusal,
  requestFrameLimits,
} from '@booblik/protocol';
import { handleApiVersions } from './api/api-versions.js';
import { handleApply } from './api/apply.js';
import { type ApiContext, discardReply, type Reply } from './api/context.js';
import { type HoldEnd, type HoldScope, handleFetch } from './api/fetch.js';
import { handleList } from './api/list.js';
import { handleMetadata, handleMetadataV2 } from './api/metadata.js';
import { handleProduce } from './api/produce.js';
import { refuse, refuseSilently } from './api/refusal.js';
import { connectionPendingWriteBytesMax, fetchPayloadBytesMax, shutdownGraceMs } from './limits.js';

/** One answer slot, in request order. Filled when its handler is done; written when all before it are. */
interface Slot {
  reply: Reply | null;
  done: boolean;
  /** What the request may hold until its answer is written (see `inflightBytes`). */
  bytes: number;
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
export class Session implements FrameSink, HoldScope {
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

  constructor(
    readonly socket: Socket,
    private readonly ctx: ApiContext,
    private readonly maxInflight: number,
    private readonly onClosed: (session: Session) => void,
  ) {
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

  private dispatch(frame: Buffer): void {
    let request: ReturnType<typeof decodeRequest>;
    try {
      request = decodeRequest(frame);
    } catch (error) {
      if (!(error instanceof RequestRefusal)) throw error;
      this.ctx.metrics.requests.invalid++;
      if (error.silent) refuseSilently(this.ctx, error.code, error.message);
      else this.answer(refuse(this.ctx, error.correlationId, error.code));
      return;
    }
    switch (request.apiKey) {
      case ApiKey.PRODUCE: {
        this.ctx.metrics.requests.produce++;
        const reply = handleProduce(request.body, request.correlationId, this.ctx, (settled) =>
          this.holdUntil(settled, frame.length),
        );
        if (reply !== null) this.answer(reply, frame.length);
        return;
      }
      case ApiKey.FETCH:
        this.ctx.metrics.requests.fetch++;
        this.answer(
          handleFetch(request.body, request.correlationId, this.ctx, this),
          Math.min(request.body.maxBytes, fetchPayloadBytesMax),
        );
        return;
      case ApiKey.METADATA:
        this.ctx.metrics.requests.metadata++;
        this.answer(
          request.apiVersion === 1
            ? handleMetadata(request.body, request.correlationId, this.ctx)
            : handleMetadataV2(request.body, request.correlationId, this.ctx, this.endpoint),
        );
        return;
      case ApiKey.APPLY:
        this.ctx.metrics.requests.apply++;
        this.answer(handleApply(request.body, request.correlationId, this.ctx));
        return;
      case ApiKey.LIST:
        this.ctx.metrics.requests.list++;
        this.answer(handleList(request.body, request.correlationId, this.ctx, this, this.endpoint));
        return;
      case ApiKey.API_VERSIONS:
        this.ctx.metrics.requests.apiVersions++;
        this.answer(handleApiVersions(request.correlationId));
        return;
    }
  }

  shortFrame(): void {
    // The header did not arrive, so there is no correlationId to echo: the spec says 0.
    this.ctx.metrics.requests.invalid++;
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

  // HoldScope: held fetches learn when the connection or the broker goes away.

  onEnd(callback: (reason: HoldEnd) => void): () => void {
    this.endCallbacks.add(callback);
    return () => this.endCallbacks.delete(callback);
  }

  /** Takes a slot for an answer, in request order, and writes it as soon as everything before it is written. */
  private answer(reply: Reply | Promise<Reply>, bytes = 0): void {
    if (this.state === SessionState.Closed) return;
    if (!(reply instanceof Promise)) {
      if (this.inflight === 0) {
        this.write(reply);
        return;
      }
      this.slots.push({ reply, done: true, bytes: 0 });
      this.flush();
      return;
    }
    const slot: Slot = { reply: null, done: false, bytes };
    this.slots.push(slot);
    this.inflightBytes += bytes;
    this.updateFlow();
    reply.then(
      (r) => {
        if (this.state === SessionState.Closed) {
          discardReply(r);
          return;
        }
        slot.reply = r;
        slot.done = true;
        this.flush();
      },
      (error: unknown) => {
        // A handler failure is our bug, not the client's: log it and drop the connection rather than
        // answer out of order or not at all.
        this.ctx.logger.error(`request failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
        this.socket.destroy();
      },
    );
  }

  /**
   * An ack NONE PRODUCE takes no answer slot, yet its frame is held until the writer has it on disk:
   * it counts against the budget until then. Uncounted, a NONE producer faster than the disk made
   * the broker queue its frames without limit while a FORCED group waited for fdatasync (found by
   * the reliability suite's overload check).
   */
  private holdUntil(settled: Promise<unknown>, bytes: number): void {
    this.inflightBytes += bytes;
    void settled.finally(() => {
      this.inflightBytes -= bytes;
      this.updateFlow();
    });
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
    // Answers written in the same turn leave in one syscall.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    if (Buffer.isBuffer(reply)) this.socket.write(reply);
    else if ('release' in reply) {
      // The pooled buffer may be reused only once the socket is done with it: the last write's callback.
      const { pieces, release } = reply;
      for (let i = 0; i < pieces.length - 1; i++) this.socket.write(pieces[i]!);
      this.socket.write(pieces[pieces.length - 1]!, () => release());
    } else for (const piece of reply) this.socket.write(piece);
  }

  /** Stops reading while too much is unanswered or unread; resumes when both are back under their limits. */
  private overloaded(): boolean {
    // Answers in flight count with the unread ones: counting only the unread let a client that never
    // reads make the broker hold maxInflight answers at once (1,024 x 1 MiB FETCHes: a GiB), found by
    // the reliability suite's overload check.
    return (
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
    this.drained?.();
    this.onClosed(this);
  }
}
