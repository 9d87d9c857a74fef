/**
 * Authenticating a connection (AUTHENTICATE v1): SCRAM-SHA-256 in two exchanges, a token in one. The
 * client checks the broker's server signature, so a broker that does not hold the user's keys fails
 * the connect. Nothing here puts a password or a token into an error or a message.
 */
import {
  type AuthenticateResponse,
  AuthMechanism,
  type ClientFirst,
  checkServerFinal,
  clientFinal,
  clientFirst,
  ScramError,
  userNameBytesMax,
} from '@booblik/protocol';
import { BrokerUnverifiedError, InvalidArgumentError, ProtocolError } from './errors.js';
import { DEFAULT_SCRAM_ITERATIONS, SCRAM_ITERATIONS_MAX } from './limits.js';

/** A token, or a function that returns a fresh one (asked again when the broker says it expired). */
export type TokenSource = string | (() => string | Promise<string>);

/** `{ user, password }` (SCRAM-SHA-256) or `{ token }` (a JWT the broker's keys signed). */
export type AuthOptions = { user: string; password: string } | { token: TokenSource };

/** Who the broker says the connection now is, and until when (-1: no end). */
export interface Authenticated {
  principal: string;
  expiresAtMs: number;
}

/** Sends one AUTHENTICATE request on the connection being authenticated. */
export type AuthenticateSend = (
  what: string,
  mechanism: string,
  data: Buffer,
) => Promise<AuthenticateResponse>;

/** Throws InvalidArgumentError naming the field (never its value) unless `auth` is one of the two forms. */
export function checkAuthOptions(auth: AuthOptions): void {
  if (typeof auth !== 'object' || auth === null)
    throw new InvalidArgumentError('auth: expected { user, password } or { token }');
  const given = auth as Record<string, unknown>;
  const scram = 'user' in given || 'password' in given;
  if (scram === 'token' in given)
    throw new InvalidArgumentError('auth: expected { user, password } or { token }, not both or neither');
  if (scram) {
    checkUserName('auth.user', given.user);
    if (typeof given.password !== 'string' || given.password === '')
      throw new InvalidArgumentError('auth.password: expected a non-empty string');
  } else if (typeof given.token !== 'function') {
    checkToken('auth.token', given.token);
  }
}

/**
 * `options` with its password or fixed token kept out of sight: a non-enumerable property, so that
 * logging a connection's options (util.inspect, JSON.stringify) does not print it. Used as given.
 */
export function concealSecrets<T extends { auth?: AuthOptions }>(options: T): T {
  const auth = options.auth;
  if (auth === undefined) return options;
  const hidden = (name: string, value: unknown) =>
    Object.defineProperty({}, name, { value, enumerable: false, writable: false });
  const concealed =
    'token' in auth
      ? typeof auth.token === 'function'
        ? auth
        : hidden('token', auth.token)
      : Object.assign(hidden('password', auth.password), { user: auth.user });
  return { ...options, auth: concealed as AuthOptions };
}

export function checkUserName(field: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '')
    throw new InvalidArgumentError(`${field}: expected a non-empty string`);
  const bytes = Buffer.byteLength(name);
  if (bytes > userNameBytesMax)
    throw new InvalidArgumentError(`${field}: ${bytes} bytes, at most ${userNameBytesMax}`);
}

function checkToken(field: string, token: unknown): asserts token is string {
  if (typeof token !== 'string' || token === '')
    throw new InvalidArgumentError(`${field}: expected a non-empty string`);
}

/** Runs the exchange `auth` names; rejects with the broker's refusal or BrokerUnverifiedError. */
export async function authenticate(
  address: string,
  auth: AuthOptions,
  send: AuthenticateSend,
): Promise<Authenticated> {
  if ('token' in auth) {
    const token = typeof auth.token === 'function' ? await auth.token() : auth.token;
    checkToken('the token provider returned', token);
    const what = 'AUTHENTICATE TOKEN';
    const answer = await send(what, AuthMechanism.TOKEN, Buffer.from(token, 'utf8'));
    if (!answer.complete) throw new ProtocolError(`${what}: the broker asked for more than one exchange`);
    return { principal: answer.principal, expiresAtMs: answer.expiresAtMs };
  }
  return scram(address, auth.user, auth.password, send);
}

async function scram(
  address: string,
  user: string,
  password: string,
  send: AuthenticateSend,
): Promise<Authenticated> {
  const what = `AUTHENTICATE ${AuthMechanism.SCRAM_SHA_256} as ${user}`;
  const first = clientFirst(user);
  const challenge = await send(what, AuthMechanism.SCRAM_SHA_256, Buffer.from(first.message, 'utf8'));
  if (challenge.complete)
    throw new BrokerUnverifiedError(address, 'it ended the SCRAM exchange before it signed anything');
  const final = proveTo(address, first, challenge.data.toString('utf8'), password);
  const outcome = await send(what, AuthMechanism.SCRAM_SHA_256, Buffer.from(final.message, 'utf8'));
  if (!outcome.complete)
    throw new BrokerUnverifiedError(address, 'it asked for more after the client-final message');
  try {
    checkServerFinal(final, outcome.data.toString('utf8'));
  } catch (error) {
    if (!(error instanceof ScramError)) throw error;
    throw new BrokerUnverifiedError(address, error.message, { cause: error });
  }
  return { principal: outcome.principal, expiresAtMs: outcome.expiresAtMs };
}

/** The client-final message for the broker's server-first, after checking what it asks of us. */
function proveTo(address: string, first: ClientFirst, serverFirst: string, password: string) {
  const iterations = /(?:^|,)i=(\d+)(?:,|$)/.exec(serverFirst)?.[1];
  const count = iterations === undefined ? Number.NaN : Number(iterations);
  // Fewer than the minimum would weaken what an eavesdropper can guess; more would freeze this thread.
  if (!(count >= DEFAULT_SCRAM_ITERATIONS && count <= SCRAM_ITERATIONS_MAX))
    throw new BrokerUnverifiedError(
      address,
      `it asked for ${iterations ?? 'no'} iterations, expected ${DEFAULT_SCRAM_ITERATIONS}..${SCRAM_ITERATIONS_MAX}`,
    );
  try {
    return clientFinal(first, serverFirst, password);
  } catch (error) {
    if (!(error instanceof ScramError)) throw error;
    throw new BrokerUnverifiedError(address, error.message, { cause: error });
  }
}
