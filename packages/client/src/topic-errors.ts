/**
 * Refusals of the topic APIs and PRODUCE v2 that carry details (docs/protocol.md, error bodies): each
 * a BrokerError, so code that handles BrokerError keeps working, with the details as fields.
 */
import {
  decodeAuthenticationFailed,
  decodeInvalidArgument,
  decodeNotPrimary,
  decodeOffsetMismatch,
  decodeRecordsLost,
  decodeRevisionMismatch,
  ErrorCode,
  ProtocolError,
  type Route,
} from '@booblik/protocol';
import {
  AuthenticationFailedError,
  AuthenticationRequiredError,
  BrokerError,
  CredentialsExpiredError,
  NotAuthorizedError,
  OutcomeUnknownError,
  type RequestSubject,
  TlsRequiredError,
} from './errors.js';

/** APPLY: a change expected another revision of its topic; nothing of the APPLY was applied. */
export class RevisionMismatchError extends BrokerError {
  override name = 'RevisionMismatchError';
  constructor(
    request: string,
    /** Which change of the APPLY (from 0). */
    readonly changeIndex: number,
    readonly topic: string,
    readonly expectedRevision: number,
    /** 0 when the topic does not exist. */
    readonly actualRevision: number,
  ) {
    super(ErrorCode.REVISION_MISMATCH, request);
    this.message = `${request} refused: topic ${topic} is at revision ${actualRevision}, the change expected ${expectedRevision}`;
  }
}

/** A value the broker does not allow (a spec field, a selector); `detail` names the field and what is allowed. */
export class InvalidArgumentRefusal extends BrokerError {
  override name = 'InvalidArgumentRefusal';
  constructor(
    request: string,
    /** The APPLY change at fault, or -1. */
    readonly index: number,
    readonly detail: string,
  ) {
    super(ErrorCode.INVALID_ARGUMENT, request);
    this.message = `${request} refused: ${detail}`;
  }
}

/** PRODUCE v2: the partition does not end at the expected offset; nothing of the batch was written. */
export class OffsetMismatchError extends BrokerError {
  override name = 'OffsetMismatchError';
  constructor(
    request: string,
    readonly expectedOffset: number,
    /** Where the partition ends: the offset to expect next. */
    readonly logEndOffset: number,
  ) {
    super(ErrorCode.OFFSET_MISMATCH, request);
    this.message = `${request} refused: expected offset ${expectedOffset}, the partition ends at ${logEndOffset}`;
  }
}

/**
 * PRODUCE v3 / FETCH v3: this broker is not the partition's primary; `route` says who is now (an
 * empty primary: nobody at the moment). Client follows it on its own; callers of Connection see it.
 */
export class NotPrimaryError extends BrokerError {
  override name = 'NotPrimaryError';
  constructor(
    request: string,
    readonly route: Route,
    subject: RequestSubject = {},
  ) {
    super(ErrorCode.NOT_PRIMARY, request, subject);
    this.message = `${request} refused: this broker is not the primary; the primary is ${route.primary || '(none)'}`;
  }
}

/**
 * FETCH v5: the records read before `fetchOffset`, from `lostFromOffset` on, are not in the partition
 * any more (it was restored from its store after its disk was lost), and those offsets hold other
 * records now. Not retriable as it is: `consumer.seek(lostFromOffset, epoch)` goes on with what the
 * partition holds there now, once whatever was made of the lost records is dealt with.
 */
export class RecordsLostError extends BrokerError {
  override name = 'RecordsLostError';
  constructor(
    request: string,
    /** The position the fetch was sent from: one past the last record read. */
    readonly fetchOffset: number,
    /** The epoch of the last record read, as the partition knows it (the latest at or below it). */
    readonly epoch: number,
    /** Where that epoch ended in the partition: the first record read that is lost. */
    readonly lostFromOffset: number,
    subject: RequestSubject = {},
  ) {
    super(ErrorCode.RECORDS_LOST, request, subject);
    this.message =
      `${request} refused: the records read from offset ${lostFromOffset} up to ${fetchOffset} were lost by the broker ` +
      `(epoch ${epoch} ended at ${lostFromOffset}); those offsets hold other records now`;
  }
}

/**
 * The error for a refusal (or OUTCOME_UNKNOWN), with the details its body carries for the codes that have one.
 * `requestOffset` is the offset the request named (PRODUCE v2's expected offset, FETCH's offset).
 */
export function refusalOf(
  code: number,
  request: string,
  body: Buffer,
  subject: RequestSubject = {},
  requestOffset = -1,
): BrokerError {
  if (code === ErrorCode.OUTCOME_UNKNOWN) return new OutcomeUnknownError(request, subject);
  // The security codes have no body (AUTHENTICATION_FAILED's reason aside), each its own class.
  if (code === ErrorCode.AUTHENTICATION_REQUIRED) return new AuthenticationRequiredError(request, subject);
  if (code === ErrorCode.CREDENTIALS_EXPIRED) return new CredentialsExpiredError(request, subject);
  if (code === ErrorCode.NOT_AUTHORIZED) return new NotAuthorizedError(request, subject);
  if (code === ErrorCode.AUTHENTICATION_FAILED && body.length === 0)
    return new AuthenticationFailedError(request, '');
  if (code === ErrorCode.TLS_REQUIRED) return new TlsRequiredError(request, subject);
  if (body.length === 0) return new BrokerError(code, request, subject);
  try {
    switch (code) {
      case ErrorCode.REVISION_MISMATCH: {
        const m = decodeRevisionMismatch(body);
        return new RevisionMismatchError(
          request,
          m.changeIndex,
          m.topic,
          m.expectedRevision,
          m.actualRevision,
        );
      }
      case ErrorCode.INVALID_ARGUMENT: {
        const m = decodeInvalidArgument(body);
        return new InvalidArgumentRefusal(request, m.index, m.message);
      }
      case ErrorCode.AUTHENTICATION_FAILED:
        return new AuthenticationFailedError(request, decodeAuthenticationFailed(body).reason);
      case ErrorCode.NOT_PRIMARY:
        return new NotPrimaryError(request, decodeNotPrimary(body), subject);
      case ErrorCode.OFFSET_MISMATCH:
        return new OffsetMismatchError(request, requestOffset, decodeOffsetMismatch(body).logEndOffset);
      case ErrorCode.RECORDS_LOST: {
        const lost = decodeRecordsLost(body);
        return new RecordsLostError(request, requestOffset, lost.epoch, lost.endOffset, subject);
      }
      default:
        return new BrokerError(code, request, subject);
    }
  } catch (error) {
    throw new ProtocolError(`${request}: the refusal's details do not decode`, { cause: error });
  }
}
