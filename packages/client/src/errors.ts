/**
 * The client's errors: a class per failure, `name` set, `cause` kept. Callers tell them apart with
 * `instanceof`, never by parsing a message.
 */
import { ErrorCode, errorInfo, errorName } from '@booblik/protocol';

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
  /** The topics the refused request named (none for a METADATA of every topic). */
  readonly topics: readonly string[];
  /** The partition the refused request named, if it named one. */
  readonly partition: number | undefined;

  constructor(
    readonly code: number,
    /** What was refused, for example `PRODUCE orders/2`. */
    readonly request: string,
    subject: RequestSubject = {},
  ) {
    const info = errorInfo(code);
    const detail = code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? unknownTopicDetail(subject) : undefined;
    super(`${request} refused: ${errorName(code)}${detail ?? (info ? ` (${info.description})` : '')}`);
    this.codeName = errorName(code);
    this.retriable = info?.retriable ?? false;
    this.topics = subject.topics ?? [];
    this.partition = subject.partition;
  }
}

/** What a request was about, so that a refusal can say which topic or partition the broker lacks. */
export interface RequestSubject {
  topics?: readonly string[];
  partition?: number;
}

/** The topic named in the message itself: "which topic?" is the first thing a user asks. */
function unknownTopicDetail({ topics = [], partition }: RequestSubject): string | undefined {
  if (topics.length === 0) return undefined;
  if (topics.length > 1) return ` (one of the topics ${topics.join(', ')} does not exist)`;
  const topic = topics[0];
  return partition === undefined
    ? ` (topic ${topic} does not exist)`
    : ` (topic ${topic} does not exist, or has no partition ${partition})`;
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

/**
 * The address answered in HTTP, not in booblik's protocol: most likely the broker's HTTP port (metrics
 * and health) was given instead of its booblik port. Not a loss to retry: dialing again gets the same.
 */
export class WrongPortError extends ConnectionClosedError {
  override name = 'WrongPortError';
  constructor(address: string) {
    super(address, `${address} speaks HTTP; the booblik port is set by booblik.port`);
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
  if (error instanceof WrongPortError) return false;
  return (
    error instanceof ConnectionClosedError || error instanceof ConnectError || error instanceof TimeoutError
  );
}
