/**
 * The shape of a pipelined connection, shared by the client's connection and the broker's peer
 * connection: requests are written in order, each under its own correlation id, and wait here until
 * their answer (matched by id), their deadline or the close of the connection, whichever is first.
 * The owner does the socket; this keeps what is in flight.
 *
 *   open ──close()──> closed (every request still in flight handed back once, to be failed)
 */
import { type Clock, type TimerHandle, unrefTimer } from '../clock.js';
import { CORRELATION_ID_MAX } from '../limits.js';

/** What the pipeline needs of a request in flight; owners extend it with how to answer it. */
export interface InFlight {
  readonly correlationId: number;
  /** When it times out, on the pipeline's clock. */
  readonly deadline: number;
  /** The caller stopped waiting: its answer is still due (and taken in its turn), its deadline no longer counts. */
  abandoned: boolean;
}

export class Pipeline<Request extends InFlight> {
  /**
   * In the order written, the oldest first. An array, not a Map: a broker answers a connection in
   * request order, so the answer is nearly always the head's, and a shift is all it costs.
   */
  private readonly inFlight: Request[] = [];
  private nextCorrelationId = 1;
  private closed = false;
  /** The one timer for every deadline (see `arm`), and when it fires. */
  private timer: TimerHandle | undefined;
  private timerAt = 0;

  constructor(
    private readonly clock: Clock,
    /**
     * A request passed its deadline: it is already out of the pipeline. Owners close the connection
     * then (an answer that late means the peer or the path is stuck), failing the rest.
     */
    private readonly timedOut: (request: Request) => void,
  ) {}

  /** Requests written and not yet answered (abandoned ones included: their answers are still due). */
  get size(): number {
    return this.inFlight.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether anyone still waits for an answer (abandoned requests do not count). */
  get anyWaiting(): boolean {
    return this.inFlight.some((request) => !request.abandoned);
  }

  /** The id for the next request (ids in flight never repeat: 2^31 requests are never pending). */
  takeCorrelationId(): number {
    const id = this.nextCorrelationId;
    this.nextCorrelationId = id === CORRELATION_ID_MAX ? 1 : id + 1;
    return id;
  }

  /** Adds a request just written; its deadline is watched from now on. */
  add(request: Request): void {
    if (this.closed) throw new Error('pipeline: add after close');
    this.inFlight.push(request);
    if (this.timer === undefined || request.deadline < this.timerAt) this.arm(request.deadline);
  }

  /** Takes out the request answered by `correlationId`, or undefined when none waits for it (then the answer is dropped). */
  take(correlationId: number): Request | undefined {
    if (this.inFlight[0]?.correlationId === correlationId) return this.inFlight.shift();
    const index = this.inFlight.findIndex((request) => request.correlationId === correlationId);
    return index === -1 ? undefined : this.inFlight.splice(index, 1)[0];
  }

  /** Takes out the oldest request, for owners whose peer answers strictly in order. */
  takeOldest(): Request | undefined {
    return this.inFlight.shift();
  }

  /**
   * Closes: every request in flight is taken out and handed to `fail`, once; deadlines stop.
   * Closing again hands nothing.
   */
  close(fail: (request: Request) => void): void {
    if (this.closed) return;
    this.closed = true;
    this.stop();
    const requests = this.inFlight.splice(0);
    for (const request of requests) fail(request);
  }

  /**
   * One timer per connection, not one per request (setting and clearing a timer per request was a
   * tenth of the client's CPU for one-record produces). It is armed for the earliest deadline known
   * when it was set; when it fires, a request past its deadline times out, else it is armed again for
   * the earliest one left. Answers do not touch it, and it does not keep the process alive.
   */
  private arm(at: number): void {
    this.stop();
    this.timerAt = at;
    this.timer = this.clock.setTimeout(this.checkDeadlines, Math.max(1, at - this.clock.now()));
    // It outlives the answers it was set for: left referenced, it would hold a finished program up.
    unrefTimer(this.timer);
  }

  private stop(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly checkDeadlines = (): void => {
    this.timer = undefined;
    if (this.closed) return;
    const now = this.clock.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (let index = 0; index < this.inFlight.length; index++) {
      const request = this.inFlight[index]!;
      if (request.abandoned) continue;
      if (request.deadline <= now) {
        this.inFlight.splice(index, 1);
        this.timedOut(request);
        // The owner closed, or will look again: the timer is armed anew for what is left.
        if (!this.closed) this.checkDeadlines();
        return;
      }
      earliest = Math.min(earliest, request.deadline);
    }
    if (earliest !== Number.POSITIVE_INFINITY) this.arm(earliest);
  };
}
