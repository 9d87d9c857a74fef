/**
 * The client's errors: a class per failure, `name` set, `cause` kept. Callers tell them apart with
 * `instanceof`, never by parsing a message.
 */
import { ErrorCode, errorInfo, errorName } from '@booblik/protocol';

export { CorruptRecordError, ProtocolError, RecordExceedsMaxBytesError } from '@booblik/protocol';

/**
 * The broker answered a request with a wire error code: a refusal (nothing of it took effect), or
 * OUTCOME_UNKNOWN (an OutcomeUnknownError: not a refusal). The framing was intact, so the
 * connection stays open and usable for other requests.
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
    options?: ErrorOptions,
  ) {
    const info = errorInfo(code);
    const detail = code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? unknownTopicDetail(subject) : undefined;
    super(
      `${request} refused: ${errorName(code)}${detail ?? (info ? ` (${info.description})` : '')}`,
      options,
    );
    this.codeName = errorName(code);
    this.retriable = info?.retriable ?? false;
    this.topics = subject.topics ?? [];
    this.partition = subject.partition;
  }

  /** OUTCOME_UNKNOWN: the request may or may not have taken effect (see OutcomeUnknownError). */
  get outcomeUnknown(): boolean {
    return this.code === ErrorCode.OUTCOME_UNKNOWN;
  }
}

/**
 * OUTCOME_UNKNOWN: the broker took the request but cannot say whether it took effect (a PRODUCE
 * written on a primary that stepped down before its replicas confirmed it; an APPLY whose etcd
 * transaction got no answer). Not a refusal: the records may appear later. No client resends it on
 * its own, since a resend may store the records twice. Also what a Client reports when it gives up
 * on a PRODUCE after an earlier send of it was lost in flight (`cause`: the last error).
 */
export class OutcomeUnknownError extends BrokerError {
  override name = 'OutcomeUnknownError';
  constructor(
    request: string,
    subject: RequestSubject = {},
    why = 'the broker took it but could not confirm it',
    options?: ErrorOptions,
  ) {
    super(ErrorCode.OUTCOME_UNKNOWN, request, subject, options);
    // A PRODUCE names its partition; a request without one (APPLY) changes topics.
    const effect = subject.partition === undefined ? unknownEffect.changes : unknownEffect.records;
    this.message = `${request}: outcome unknown: ${why}; ${effect}`;
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

/**
 * AUTHENTICATION_REQUIRED: the broker has `booblik.auth=required` and this connection has not
 * authenticated. Connect with `auth` (a user and password, or a token).
 */
export class AuthenticationRequiredError extends BrokerError {
  override name = 'AuthenticationRequiredError';
  constructor(request: string, subject: RequestSubject = {}) {
    super(ErrorCode.AUTHENTICATION_REQUIRED, request, subject);
    this.message = `${request} refused: the broker requires authentication: connect with a user and password, or a token`;
  }
}

/**
 * AUTHENTICATION_FAILED: the broker refused the credentials. `reason` is the broker's, for people;
 * it never says whether the user exists. Trying again with the same credentials fails the same way.
 */
export class AuthenticationFailedError extends BrokerError {
  override name = 'AuthenticationFailedError';
  constructor(
    request: string,
    readonly reason: string,
  ) {
    super(ErrorCode.AUTHENTICATION_FAILED, request);
    this.message = `${request} refused: authentication failed: ${reason || '(the broker gave no reason)'}`;
  }
}

/**
 * CREDENTIALS_EXPIRED: the token this connection authenticated with has expired. A connection given a
 * token provider (a function) fetches a fresh token and sends the request once more on its own; with
 * a fixed token this reaches the caller.
 */
export class CredentialsExpiredError extends BrokerError {
  override name = 'CredentialsExpiredError';
  constructor(request: string, subject: RequestSubject = {}) {
    super(ErrorCode.CREDENTIALS_EXPIRED, request, subject);
    this.message = `${request} refused: the connection's token has expired: authenticate again with a fresh one`;
  }
}

/** NOT_AUTHORIZED: the connection is authenticated, but its principal may not do this. */
export class NotAuthorizedError extends BrokerError {
  override name = 'NotAuthorizedError';
  constructor(request: string, subject: RequestSubject = {}) {
    super(ErrorCode.NOT_AUTHORIZED, request, subject);
    this.message = `${request} refused: NOT_AUTHORIZED (the authenticated user may not do this)`;
  }
}

/**
 * The broker did not prove that it holds the user's credentials (a SCRAM server signature that is
 * wrong or missing, a nonce that is not ours, an exchange cut short): it may be an impostor, so the
 * connection is not used.
 */
export class BrokerUnverifiedError extends Error {
  override name = 'BrokerUnverifiedError';
  constructor(
    readonly address: string,
    why: string,
    options?: ErrorOptions,
  ) {
    super(`${address}: the broker did not prove itself: ${why}`, options);
  }
}

/**
 * The connection is gone (closed by either side, reset, or torn down after a failure); `cause` says
 * why. `outcomeUnknown` is true for a PRODUCE or APPLY that was sent and lost before its answer: it
 * may or may not have taken effect (the message says so).
 */
export class ConnectionClosedError extends Error {
  override name = 'ConnectionClosedError';
  readonly outcomeUnknown: boolean;
  constructor(
    readonly address: string,
    message = `connection to ${address} is closed`,
    options?: ErrorOptions & { outcomeUnknown?: boolean },
  ) {
    super(message, options);
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
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

/**
 * The TLS handshake failed: the broker did not answer TLS (booblik.tls is off there), its certificate
 * was not trusted or names another host, or it refused this client's certificate. `cause` has the
 * TLS library's error. Not a loss to retry: dialing again meets the same certificates.
 */
export class TlsError extends ConnectError {
  override name = 'TlsError';
}

/**
 * The broker requires TLS (`booblik.tls=required`) and this connection is plaintext: it answered the
 * first request so and closed the connection.
 */
export class TlsRequiredError extends BrokerError {
  override name = 'TlsRequiredError';
  constructor(request: string, subject: RequestSubject = {}) {
    super(ErrorCode.TLS_REQUIRED, request, subject);
    this.message = `${request} refused: the broker requires TLS: connect with TLS (--tls)`;
  }
}

/**
 * Something took longer than its limit. For a request this also closes the connection (see
 * Connection); `outcomeUnknown` is true for a PRODUCE or APPLY sent without an answer in time.
 */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
  readonly outcomeUnknown: boolean;
  constructor(
    /** What timed out, for example `connect` or `FETCH orders/0`. */
    readonly operation: string,
    readonly timeoutMs: number,
    /** For a request that changes something: what its lost answer leaves unknown. */
    unknownEffect?: string,
  ) {
    super(`${operation} got no answer within ${timeoutMs} ms${unknownEffect ? `: ${unknownEffect}` : ''}`);
    this.outcomeUnknown = unknownEffect !== undefined;
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
  if (error instanceof WrongPortError || error instanceof TlsError) return false;
  return (
    error instanceof ConnectionClosedError || error instanceof ConnectError || error instanceof TimeoutError
  );
}

/**
 * Whether `error` leaves the request's outcome unknown: OUTCOME_UNKNOWN from the broker, or a PRODUCE
 * or APPLY whose connection was lost (or timed out) after it was sent. Its records may or may not
 * have been stored: sending them again may store them twice.
 */
export function isOutcomeUnknown(error: unknown): boolean {
  if (error instanceof BrokerError) return error.outcomeUnknown;
  return (error instanceof ConnectionClosedError || error instanceof TimeoutError) && error.outcomeUnknown;
}

/** What a lost answer leaves unknown, said in a lost request's error. */
export const unknownEffect = {
  records: 'the records may or may not have been stored (sending them again may store them twice)',
  changes: 'it may or may not have been applied (sending it again may apply it twice)',
} as const;
