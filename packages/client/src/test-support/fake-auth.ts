/**
 * Authentication in front of a fake broker's handler, as `booblik.auth=required` behaves: AUTHENTICATE
 * (SCRAM-SHA-256 with protocol's broker-side arithmetic, or a token the test accepts), USERS on an
 * in-memory table, and AUTHENTICATION_REQUIRED / CREDENTIALS_EXPIRED for anything else until the
 * connection has (again) authenticated. Everything it saw is kept for the test to check.
 */
import { createHmac, randomBytes } from 'node:crypto';
import {
  ApiKey,
  AuthMechanism,
  ErrorCode,
  encodeAuthenticateResponse,
  encodeAuthenticationFailedResponse,
  encodeErrorResponse,
  encodeInvalidArgumentResponse,
  encodeUsersResponse,
  NEVER_EXPIRES,
  type ParsedClientFirst,
  parseClientFirst,
  type Request,
  type ScramCredential,
  ScramError,
  scramCredential,
  serverFirst,
  UsersOp,
  verifyClientFinal,
} from '@booblik/protocol';
import type { FakeHandler, FakePeer, ReceivedRequest } from './fake-broker.js';

type Body<K extends number> = Extract<Request, { apiKey: K }>['body'];

export interface FakeAuthOptions {
  /** Users and their passwords (hashed here with a random salt, 4096 iterations). */
  users?: Record<string, string>;
  /** Accepts a token: its principal and expiry (Unix ms), or undefined to refuse it. */
  tokens?: (token: string) => { principal: string; expiresAtMs: number } | undefined;
}

interface PeerState {
  principal?: string;
  expired: boolean;
  scram?: { user: string; first: ParsedClientFirst; sent: string };
}

const secret = randomBytes(32);

export class FakeAuth {
  readonly credentials = new Map<string, ScramCredential>();
  /** Every AUTHENTICATE in arrival order: its mechanism and whom it authenticated (undefined: not yet or refused). */
  readonly attempts: { mechanism: string; principal: string | undefined }[] = [];
  private readonly peers = new WeakMap<FakePeer, PeerState>();
  private readonly live = new Set<PeerState>();

  constructor(private readonly options: FakeAuthOptions = {}) {
    for (const [name, password] of Object.entries(options.users ?? {}))
      this.credentials.set(name, scramCredential(password, randomBytes(16), 4096));
  }

  /** The principal of the connection `peer`, if it authenticated. */
  principalOf(peer: FakePeer): string | undefined {
    return this.peers.get(peer)?.principal;
  }

  /** Every authenticated connection's credentials expire now (as a token's exp passing). */
  expireAll(): void {
    for (const state of this.live) if (state.principal !== undefined) state.expired = true;
  }

  /** `inner` behind authentication. */
  wrap(inner: FakeHandler): FakeHandler {
    return (req) => {
      const state = this.stateOf(req.peer);
      const id = req.request.correlationId;
      if (req.request.apiKey === ApiKey.AUTHENTICATE) return this.authenticate(state, id, req.request.body);
      if (state.principal === undefined) return encodeErrorResponse(id, ErrorCode.AUTHENTICATION_REQUIRED);
      if (state.expired) return encodeErrorResponse(id, ErrorCode.CREDENTIALS_EXPIRED);
      if (req.request.apiKey === ApiKey.USERS) return this.users(id, req.request.body);
      return inner(req as ReceivedRequest);
    };
  }

  private stateOf(peer: FakePeer): PeerState {
    let state = this.peers.get(peer);
    if (!state) {
      state = { expired: false };
      this.peers.set(peer, state);
      this.live.add(state);
      peer.socket.once('close', () => this.live.delete(state!));
    }
    return state;
  }

  private authenticate(state: PeerState, id: number, body: Body<typeof ApiKey.AUTHENTICATE>): Buffer {
    const attempt = { mechanism: body.mechanism, principal: undefined as string | undefined };
    this.attempts.push(attempt);
    const done = (principal: string, data: Buffer, expiresAtMs: number) => {
      state.principal = principal;
      state.expired = false;
      attempt.principal = principal;
      return encodeAuthenticateResponse(id, { complete: true, data, principal, expiresAtMs });
    };
    if (body.mechanism === AuthMechanism.TOKEN) {
      const accepted = this.options.tokens?.(body.data.toString('utf8'));
      if (!accepted) return encodeAuthenticationFailedResponse(id, 'the token is not valid');
      return done(accepted.principal, Buffer.alloc(0), accepted.expiresAtMs);
    }
    if (body.mechanism !== AuthMechanism.SCRAM_SHA_256)
      return encodeInvalidArgumentResponse(id, {
        index: -1,
        message: 'mechanism: expected SCRAM-SHA-256 or TOKEN',
      });
    const message = body.data.toString('utf8');
    try {
      if (message.startsWith('n,')) {
        const first = parseClientFirst(message);
        const sent = serverFirst(this.credentialOf(first.user), first.nonce);
        state.scram = { user: first.user, first, sent };
        return encodeAuthenticateResponse(id, {
          complete: false,
          data: Buffer.from(sent),
          principal: '',
          expiresAtMs: NEVER_EXPIRES,
        });
      }
      const scram = state.scram;
      state.scram = undefined;
      if (!scram) throw new ScramError('a client-final message with no client-first before it');
      const credential = this.credentials.get(scram.user);
      if (!credential) throw new ScramError('unknown user');
      const final = verifyClientFinal(credential, scram.first, scram.sent, message);
      return done(scram.user, Buffer.from(final), NEVER_EXPIRES);
    } catch (error) {
      if (!(error instanceof ScramError)) throw error;
      return encodeAuthenticationFailedResponse(id, 'wrong user name or password');
    }
  }

  /** A known user's credential, or one derived from the name so that nothing says it is unknown. */
  private credentialOf(user: string): ScramCredential {
    const known = this.credentials.get(user);
    if (known) return known;
    const salt = createHmac('sha256', secret).update(user).digest().subarray(0, 16);
    return { salt, iterations: 4096, storedKey: Buffer.alloc(32), serverKey: Buffer.alloc(32) };
  }

  private users(id: number, body: Body<typeof ApiKey.USERS>): Buffer {
    if (body.op === UsersOp.UPSERT) this.credentials.set(body.name, body.credential);
    if (body.op === UsersOp.REMOVE && !this.credentials.delete(body.name))
      return encodeInvalidArgumentResponse(id, { index: -1, message: `no user ${body.name}` });
    const names = [...this.credentials.keys()].sort();
    return encodeUsersResponse(
      id,
      names.map((name) => ({
        name,
        mechanism: AuthMechanism.SCRAM_SHA_256,
        iterations: this.credentials.get(name)!.iterations,
      })),
    );
  }
}
