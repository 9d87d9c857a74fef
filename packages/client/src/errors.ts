/**
 * The client's errors: a class per failure, `name` set, `cause` kept. Callers tell them apart with
 * `instanceof`, never by parsing a message.
 */
import { errorInfo, errorName } from '@booblik/protocol';

export { CorruptRecordError, ProtocolError, RecordExceedsMaxBytesError } from '@booblik/protocol';

/**
 * The broker refused a request with a wire error code. The framing was intact, so the connection
 * stays open and usable for other requests.
 */
export class BrokerError extends Error {
  override name = 'BrokerError';
  /** The wire code's name, or `UNKNOWN(n)` for a code this client does not know. */
  readonly codeName: string;
  /** Whether repeating the same request later can succeed without changing it. */
  readonly retriable: boolean;

  constructor(
    readonly code: number,
    /** What was refused, for example `PRODUCE orders/2`. */
    readonly request: string,
  ) {
    const info = errorInfo(code);
    super(`${request} refused: ${errorName(code)}${info ? ` (${info.description})` : ''}`);
    this.codeName = errorName(code);
    this.retriable = info?.retriable ?? false;
  }
}

/** The connection is gone (closed by either side, reset, or torn down after a failure); `cause` says why. */
export class ConnectionClosedError extends Error {
  override name = 'ConnectionClosedError';
  constructor(
    readonly address: string,
    message = `connection to ${address} is closed`,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Could not open a connection (refused, unreachable, name not found, or too slow); `cause` has the detail. */
export class ConnectError extends Error {
  override name = 'ConnectError';
  constructor(
    readonly address: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`cannot connect to ${address}: ${message}`, options);
  }
}

/** Something took longer than its limit. For a request this also closes the connection (see Connection). */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
  constructor(
    /** What timed out, for example `connect` or `FETCH orders/0`. */
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super(`${operation} got no answer within ${timeoutMs} ms`);
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason. */
export class AbortError extends Error {
  override name = 'AbortError';
  constructor(operation: string, options?: ErrorOptions) {
    super(`${operation} was aborted`, options);
  }
}

/** An argument the client cannot encode or act on; the message names the field and what was expected. */
export class InvalidArgumentError extends RangeError {
  override name = 'InvalidArgumentError';
}

/** A request larger than the frame limit: sent, it would make the broker drop the whole connection. */
export class RequestTooLargeError extends Error {
  override name = 'RequestTooLargeError';
  constructor(
    readonly request: string,
    readonly frameBytes: number,
    readonly frameBytesMax: number,
  ) {
    super(`${request} needs a frame of ${frameBytes} bytes, more than the limit of ${frameBytesMax}`);
  }
}

/** send() after close(), or on a producer whose connection failed (`cause` is that failure). */
export class ProducerClosedError extends Error {
  override name = 'ProducerClosedError';
  constructor(message = 'the producer is closed', options?: ErrorOptions) {
    super(message, options);
  }
}

/** The consumer was used after close(), or iterated twice at once. */
export class ConsumerStateError extends Error {
  override name = 'ConsumerStateError';
}

/** Failures after which a consumer dials again: the connection went away, not the request. */
export function isConnectionLoss(error: unknown): boolean {
  return (
    error instanceof ConnectionClosedError || error instanceof ConnectError || error instanceof TimeoutError
  );
}
