/**
 * USERS v1 requests: the SCRAM users a broker knows. A password is salted (16 random bytes) and
 * hashed here: only the salt, the iterations, StoredKey and ServerKey cross the wire.
 */
import { randomBytes } from 'node:crypto';
import { scramCredential, scramIterationsMin, UsersOp, type UsersRequest } from '@booblik/protocol';
import { checkUserName } from './auth.js';
import { checkInt32 } from './checks.js';
import { InvalidArgumentError } from './errors.js';
import { DEFAULT_SCRAM_ITERATIONS, SCRAM_ITERATIONS_MAX, SCRAM_SALT_BYTES } from './limits.js';

export type { UserListing } from '@booblik/protocol';

export interface UpsertUserOptions {
  /** PBKDF2 iterations (default 4096, RFC 7677's minimum): each login costs the client this many. */
  iterations?: number;
}

/** The request and its name for errors (`USERS UPSERT alice`); throws InvalidArgumentError first. */
export function usersRequest(
  op: 'list' | 'upsert' | 'remove',
  name = '',
  password?: string,
  options: UpsertUserOptions = {},
): { what: string; request: UsersRequest } {
  if (op === 'list') return { what: 'USERS LIST', request: { op: UsersOp.LIST } };
  checkUserName('name', name);
  if (op === 'remove') return { what: `USERS REMOVE ${name}`, request: { op: UsersOp.REMOVE, name } };
  if (typeof password !== 'string' || password === '')
    throw new InvalidArgumentError('password: expected a non-empty string');
  const iterations = checkInt32(
    'iterations',
    options.iterations ?? DEFAULT_SCRAM_ITERATIONS,
    scramIterationsMin,
  );
  if (iterations > SCRAM_ITERATIONS_MAX)
    throw new InvalidArgumentError(
      `iterations: ${iterations}, at most ${SCRAM_ITERATIONS_MAX} (every login pays them)`,
    );
  const credential = scramCredential(password, randomBytes(SCRAM_SALT_BYTES), iterations);
  return { what: `USERS UPSERT ${name}`, request: { op: UsersOp.UPSERT, name, credential } };
}
