/**
 * The authenticated half of a connection: AUTHENTICATE on it (connect() runs it for `auth`), whom
 * the broker took it for, and the refresh of a provided token when the broker says it expired.
 */
import type net from 'node:net';
import {
  decodeAuthenticateResponse,
  ErrorCode,
  encodeAuthenticateRequest,
  type FrameReader,
} from '@booblik/protocol';
import { type Authenticated, type AuthOptions, authenticate, checkAuthOptions } from './auth.js';
import { TOKEN_REFRESH_MARGIN_MS } from './limits.js';
import { RequestChannel } from './request-channel.js';
import type { ConnectOptions } from './request-options.js';
import { refusalOf } from './topic-errors.js';

export abstract class AuthenticatedChannel extends RequestChannel {
  /** Whom the broker took this connection for, once authenticated (see `auth`). */
  private authenticated: Authenticated | undefined;
  /** The refresh under way after CREDENTIALS_EXPIRED, shared by every request it refused. */
  private refreshing: Promise<void> | undefined;

  protected constructor(socket: net.Socket, frames: FrameReader, address: string, options: ConnectOptions) {
    super(socket, frames, address, options);
    const auth = options.auth;
    if (auth !== undefined && 'token' in auth && typeof auth.token === 'function') {
      this.refreshCredentials = () => {
        this.refreshing ??= this.authenticate(auth).then(
          () => {
            this.refreshing = undefined;
          },
          (error: unknown) => {
            this.refreshing = undefined;
            throw error;
          },
        );
        return this.refreshing;
      };
    }
  }

  /**
   * Before a request the broker never answers (PRODUCE with ack NONE): its refusal as expired would
   * never be seen, so a provided token at or near its end is refreshed first. Undefined: send now.
   */
  protected refreshIfExpiring(): Promise<void> | undefined {
    const expiresAtMs = this.authenticated?.expiresAtMs;
    if (this.refreshCredentials === undefined || expiresAtMs === undefined || expiresAtMs < 0)
      return undefined;
    // The broker judges by its wall clock, so this does too (the connection's clock is monotonic).
    if (Date.now() < expiresAtMs - TOKEN_REFRESH_MARGIN_MS) return undefined;
    return this.refreshCredentials();
  }

  /** The principal the broker authenticated this connection as (undefined before, or without `auth`). */
  get principal(): string | undefined {
    return this.authenticated?.principal;
  }

  /** When the credentials of this connection end (Unix ms; -1: never; undefined: not authenticated). */
  get credentialsExpireAtMs(): number | undefined {
    return this.authenticated?.expiresAtMs;
  }

  /**
   * AUTHENTICATE on this connection (again, at any time: a fresh token, another user). connect()
   * does it for `options.auth`; a refusal leaves the connection open, as it was before.
   */
  async authenticate(auth: AuthOptions, signal?: AbortSignal): Promise<Authenticated> {
    checkAuthOptions(auth);
    const result = await authenticate(this.address, auth, (what, mechanism, data) =>
      this.requestOnce(
        what,
        {},
        (id) => encodeAuthenticateRequest(id, { mechanism, data }),
        (body) => decodeAuthenticateResponse(body),
        this.requestTimeoutMs,
        signal,
        (code, body) => {
          const refusal = refusalOf(code, what, body);
          if (code === ErrorCode.UNSUPPORTED_VERSION)
            refusal.message = `${what} refused: the broker predates authentication (no AUTHENTICATE)`;
          return refusal;
        },
      ),
    );
    this.authenticated = result;
    return result;
  }
}
