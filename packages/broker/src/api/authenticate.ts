import {
  type AuthenticateRequest,
  ErrorCode,
  encodeAuthenticateResponse,
  encodeAuthenticationFailedResponse,
  encodeInvalidArgumentResponse,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ConnectionAuth } from '../security/connection-auth.js';
import type { ApiContext } from './context.js';

/**
 * AUTHENTICATE v1: one step of SCRAM-SHA-256 or a token (security/security-service.ts). A refusal
 * leaves the connection open and anonymous.
 */
export async function handleAuthenticate(
  req: AuthenticateRequest,
  correlationId: number,
  ctx: ApiContext,
  auth: ConnectionAuth,
): Promise<Reply> {
  const outcome = await ctx.security.authenticate(auth, req);
  if (outcome.ok) return encodeAuthenticateResponse(correlationId, outcome);
  ctx.metrics.refused(
    outcome.code === ErrorCode.INVALID_ARGUMENT ? 'INVALID_ARGUMENT' : 'AUTHENTICATION_FAILED',
  );
  if (outcome.code === ErrorCode.INVALID_ARGUMENT)
    return encodeInvalidArgumentResponse(correlationId, { index: -1, message: outcome.reason });
  return encodeAuthenticationFailedResponse(correlationId, outcome.reason);
}
