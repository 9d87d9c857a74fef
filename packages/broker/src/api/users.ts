import {
  ErrorCode,
  encodeInvalidArgumentResponse,
  encodeUsersResponse,
  UsersOp,
  type UsersRequest,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ConnectionAuth } from '../security/connection-auth.js';
import { UserChangeError } from '../security/errors.js';
import { credentialProblem } from '../security/user-rules.js';
import type { ApiContext } from './context.js';
import { refuse } from './refusal.js';

/**
 * USERS v1: the SCRAM users. Authorized as `cluster`: with auth required only a superuser may (the
 * ACLs will widen this); with auth off anyone may, so users can be made before auth is turned on.
 * A removed user's live connections are closed.
 */
export async function handleUsers(
  req: UsersRequest,
  correlationId: number,
  ctx: ApiContext,
  auth: ConnectionAuth,
): Promise<Reply> {
  const security = ctx.security;
  if (security.required && !security.isSuperuser(auth.principal)) {
    ctx.logger.warn(`USERS refused to ${auth.principal} from ${auth.remoteAddress}: not a superuser`);
    return refuse(ctx, correlationId, ErrorCode.NOT_AUTHORIZED);
  }
  const invalid = (message: string) => {
    ctx.metrics.refused('INVALID_ARGUMENT');
    return encodeInvalidArgumentResponse(correlationId, { index: -1, message });
  };
  try {
    return await change(req, correlationId, ctx, auth, invalid);
  } catch (error) {
    // Not reached etcd (refused), or sent without an answer (it may have been made).
    if (error instanceof UserChangeError) {
      ctx.logger.warn(`USERS: ${error.message}`);
      return refuse(ctx, correlationId, error.code);
    }
    ctx.logger.error(`USERS: the users could not be written: ${(error as Error).message}`);
    return refuse(ctx, correlationId, ErrorCode.STORAGE_ERROR);
  }
}

async function change(
  req: UsersRequest,
  correlationId: number,
  ctx: ApiContext,
  auth: ConnectionAuth,
  invalid: (message: string) => Reply,
): Promise<Reply> {
  const security = ctx.security;
  switch (req.op) {
    case UsersOp.LIST:
      break;
    case UsersOp.UPSERT: {
      const problem = credentialProblem(req.name, req.credential);
      if (problem !== null) return invalid(problem);
      const existed = security.users.get(req.name) !== undefined;
      await security.users.upsert(req.name, req.credential);
      ctx.logger.info(
        `user ${req.name} ${existed ? 'given new credentials' : 'added'} by ${auth.principal ?? 'an anonymous connection'} from ${auth.remoteAddress}`,
      );
      break;
    }
    case UsersOp.REMOVE: {
      if (!(await security.users.remove(req.name)))
        return invalid(`name: no user ${JSON.stringify(req.name)}`);
      const closed = security.closeConnectionsOf(req.name);
      ctx.logger.info(
        `user ${req.name} removed by ${auth.principal ?? 'an anonymous connection'} from ${auth.remoteAddress}; ${closed} live connection(s) closed`,
      );
      break;
    }
  }
  return encodeUsersResponse(correlationId, security.users.list());
}
