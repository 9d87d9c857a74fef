/**
 * Who may connect: the users (SCRAM), the token keys, the superusers, the failure limit. The session
 * asks it whether a request may be served before authentication (`gate`), and AUTHENTICATE and
 * USERS run through it. With `booblik.auth=off` nothing is gated; AUTHENTICATE still works, so a
 * client configured with credentials can talk to a broker that does not ask for them.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from '@booblik/log';
import {
  type AuthenticateRequest,
  AuthMechanism,
  authMechanisms,
  type Clock,
  ErrorCode,
  NEVER_EXPIRES,
  Operation,
  type OperationValue,
  parseClientFirst,
  type ScramCredential,
  ScramError,
  scramCredential,
  scramIterationsMin,
  serverFirst,
  verifyClientFinal,
} from '@booblik/protocol';
import type { BrokerMetrics } from '../metrics.js';
import type { ConnectionAuth } from './connection-auth.js';
import { TokenRefusal, type TokenVerifier } from './token-verifier.js';
import { userNameProblem } from './user-rules.js';
import type { UserStore } from './user-store.js';

export type AuthMode = 'off' | 'required';

/** What AUTHENTICATE answers: the next message, the principal once complete, or a refusal. */
export type AuthOutcome =
  | { ok: true; complete: boolean; data: Buffer; principal: string; expiresAtMs: number }
  | { ok: false; code: typeof ErrorCode.AUTHENTICATION_FAILED; reason: string; logDetail?: string }
  | { ok: false; code: typeof ErrorCode.INVALID_ARGUMENT; reason: string };

/** The one reason a refused SCRAM exchange gives, whatever went wrong: nothing tells a user that does not exist. */
const INVALID_CREDENTIALS = 'invalid user name or password';

export interface SecurityOptions {
  mode: AuthMode;
  /** The store in use: the data directory's on one node, etcd's in a cluster (once joined). */
  users: () => UserStore;
  tokens: TokenVerifier | null;
  superusers: ReadonlySet<string>;
  logger: Logger;
  metrics: BrokerMetrics;
  clock: Clock;
  /** Unix ms: token expiries are wall-clock times. */
  wallNowMs: () => number;
}

export class SecurityService {
  readonly required: boolean;
  /** Makes the decoy salt of an unknown name: the same name gets the same salt from this broker. */
  private readonly decoySecret = randomBytes(32);
  private readonly connections = new Set<{ auth: ConnectionAuth; close(): void }>();

  constructor(
    private readonly options: SecurityOptions,
    readonly limiter: {
      waitOf(address: string): number;
      failed(address: string): void;
      succeeded(address: string): void;
    },
  ) {
    this.required = options.mode === 'required';
  }

  get clock(): Clock {
    return this.options.clock;
  }

  get users(): UserStore {
    return this.options.users();
  }

  isSuperuser(principal: string | null): boolean {
    return principal !== null && this.options.superusers.has(principal);
  }

  /**
   * Whether a request other than API_VERSIONS and AUTHENTICATE may be served on this connection now:
   * null if so, else the code to answer.
   */
  gate(auth: ConnectionAuth, operation: OperationValue): number | null {
    if (!this.required) return null;
    const step = auth.step;
    if (step.kind !== 'authenticated') return ErrorCode.AUTHENTICATION_REQUIRED;
    if (step.expiresAtMs !== NEVER_EXPIRES && this.options.wallNowMs() >= step.expiresAtMs)
      return ErrorCode.CREDENTIALS_EXPIRED;
    // Writes into a replica come from brokers alone: a user's REPLICATE could rewrite a partition.
    if (operation === Operation.REPLICATE && !step.broker) return ErrorCode.NOT_AUTHORIZED;
    return null;
  }

  /** Live connections, so a removed user's can be closed. */
  track(connection: { auth: ConnectionAuth; close(): void }): () => void {
    this.connections.add(connection);
    return () => this.connections.delete(connection);
  }

  /** Closes the live connections of `principal` (its user was removed): they are served nothing more. */
  closeConnectionsOf(principal: string): number {
    let closed = 0;
    for (const c of this.connections) {
      if (c.auth.principal !== principal) continue;
      c.auth.reset();
      c.close();
      closed++;
    }
    return closed;
  }

  async authenticate(auth: ConnectionAuth, req: AuthenticateRequest): Promise<AuthOutcome> {
    if (!authMechanisms.includes(req.mechanism)) {
      return {
        ok: false,
        code: ErrorCode.INVALID_ARGUMENT,
        reason: `mechanism: ${JSON.stringify(req.mechanism)}, expected one of ${authMechanisms.join(', ')}`,
      };
    }
    const address = auth.remoteAddress;
    const wait = this.limiter.waitOf(address);
    if (wait > 0) {
      this.options.metrics.authRateLimited++;
      auth.reset();
      return {
        ok: false,
        code: ErrorCode.AUTHENTICATION_FAILED,
        reason: `too many failed attempts; wait ${wait} ms`,
      };
    }
    const outcome =
      req.mechanism === AuthMechanism.TOKEN ? await this.token(auth, req.data) : this.scram(auth, req.data);
    if (!outcome.ok) {
      this.limiter.failed(address);
      this.options.metrics.authFailed++;
      const detail =
        'logDetail' in outcome && outcome.logDetail !== undefined ? outcome.logDetail : outcome.reason;
      this.options.logger.warn(`authentication failed from ${address} (${req.mechanism}): ${detail}`);
      auth.reset();
    } else if (outcome.complete) {
      this.limiter.succeeded(address);
      this.options.metrics.authSucceeded++;
    }
    return outcome;
  }

  private scram(auth: ConnectionAuth, data: Buffer): AuthOutcome {
    const message = data.toString('utf8');
    const step = auth.step;
    try {
      if (message.startsWith('c=')) {
        if (step.kind !== 'scramStarted')
          throw new ScramError('a client-final message with no exchange started');
        const serverFinal = verifyClientFinal(step.credential, step.first, step.serverFirst, message);
        // A decoy's proof never verifies; this is belt and braces.
        if (!step.known) throw new ScramError('unknown user');
        auth.move({
          kind: 'authenticated',
          principal: step.first.user,
          mechanism: AuthMechanism.SCRAM_SHA_256,
          expiresAtMs: NEVER_EXPIRES,
          broker: false,
        });
        return {
          ok: true,
          complete: true,
          data: Buffer.from(serverFinal),
          principal: step.first.user,
          expiresAtMs: NEVER_EXPIRES,
        };
      }
      const first = parseClientFirst(message);
      const user = this.users.get(first.user);
      const credential = user ?? this.decoy(first.user);
      const sent = serverFirst(credential, first.nonce);
      auth.move({ kind: 'scramStarted', first, serverFirst: sent, credential, known: user !== undefined });
      return {
        ok: true,
        complete: false,
        data: Buffer.from(sent),
        principal: '',
        expiresAtMs: NEVER_EXPIRES,
      };
    } catch (error) {
      if (!(error instanceof ScramError)) throw error;
      // The client sees one reason; the broker's log says which check failed.
      const unknown = step.kind === 'scramStarted' && !step.known && message.startsWith('c=');
      const logDetail = unknown ? `no user ${JSON.stringify(step.first.user)}` : error.message;
      return { ok: false, code: ErrorCode.AUTHENTICATION_FAILED, reason: INVALID_CREDENTIALS, logDetail };
    }
  }

  private async token(auth: ConnectionAuth, data: Buffer): Promise<AuthOutcome> {
    if (this.options.tokens === null)
      return {
        ok: false,
        code: ErrorCode.AUTHENTICATION_FAILED,
        reason: 'this broker takes no tokens (booblik.auth.token.keys.file is not set)',
      };
    try {
      const token = await this.options.tokens.verify(data.toString('utf8'));
      auth.move({
        kind: 'authenticated',
        principal: token.subject,
        mechanism: AuthMechanism.TOKEN,
        expiresAtMs: token.expiresAtMs,
        broker: token.broker,
      });
      return {
        ok: true,
        complete: true,
        data: Buffer.alloc(0),
        principal: token.subject,
        expiresAtMs: token.expiresAtMs,
      };
    } catch (error) {
      if (!(error instanceof TokenRefusal)) throw error;
      return { ok: false, code: ErrorCode.AUTHENTICATION_FAILED, reason: error.message };
    }
  }

  /** A credential no password matches, with a salt that depends only on the name and this broker. */
  private decoy(name: string): ScramCredential {
    const salt = createHmac('sha256', this.decoySecret).update(name).digest().subarray(0, 16);
    return { salt, iterations: scramIterationsMin, storedKey: randomBytes(32), serverKey: randomBytes(32) };
  }

  /**
   * Adds the bootstrap user when no user exists yet: `name:password` (the password never logged).
   * In a cluster, brokers started together may race: one of them makes it.
   */
  async bootstrap(spec: string | undefined): Promise<void> {
    if (spec === undefined || spec === '' || this.users.size > 0) return;
    const colon = spec.indexOf(':');
    if (colon <= 0 || colon === spec.length - 1) {
      this.options.logger.warn('BOOBLIK_BOOTSTRAP_USER is not "name:password"; no user was created');
      return;
    }
    const name = spec.slice(0, colon);
    const problem = userNameProblem(name);
    if (problem !== null) {
      this.options.logger.warn(`BOOBLIK_BOOTSTRAP_USER: ${problem}; no user was created`);
      return;
    }
    const credential = scramCredential(spec.slice(colon + 1), randomBytes(16), scramIterationsMin);
    if (await this.users.addFirst(name, credential))
      this.options.logger.info(`created user ${name} from BOOBLIK_BOOTSTRAP_USER (no user existed)`);
  }
}
