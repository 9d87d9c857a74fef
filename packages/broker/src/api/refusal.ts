import { LogClosedError, RecordTooLargeError, StorageError } from '@booblik/log';
import {
  ErrorCode,
  encodeErrorResponse,
  encodeNotPrimaryResponse,
  errorName,
  type Route,
} from '@booblik/protocol';
import { ReplicationRefusal } from '../replication/refusal.js';
import type { Reply } from '../reply.js';
import type { ApiContext } from './context.js';

/** A refusal frame, counted. */
export function refuse(ctx: ApiContext, correlationId: number, code: number): Reply {
  ctx.metrics.refused(errorName(code));
  return encodeErrorResponse(correlationId, code);
}

/** The answer to a request the router could not serve: NOT_PRIMARY with the route when one is known. */
export function refuseUnrouted(
  ctx: ApiContext,
  correlationId: number,
  decision: { code: number; route?: Route },
): Reply {
  if (decision.route === undefined) return refuse(ctx, correlationId, decision.code);
  ctx.metrics.refused('NOT_PRIMARY');
  return encodeNotPrimaryResponse(correlationId, decision.route);
}

/**
 * A refusal that must not be answered: a PRODUCE with ack NONE (the client would read any frame as
 * the answer to its next request). Counted and logged instead.
 */
export function refuseSilently(ctx: ApiContext, code: number, what: string): null {
  ctx.metrics.refused(errorName(code));
  ctx.metrics.silentRefusals++;
  ctx.noisyLog.warn(
    `refused a PRODUCE with ack NONE (not answered, as the protocol requires): ${errorName(code)}: ${what}`,
  );
  return null;
}

/** The wire code for an error from the log. */
export function codeForAppendError(error: unknown): number {
  if (error instanceof ReplicationRefusal) return error.code;
  if (error instanceof RecordTooLargeError) return ErrorCode.RECORD_TOO_LARGE;
  if (error instanceof StorageError || error instanceof LogClosedError) return ErrorCode.STORAGE_ERROR;
  throw error;
}
