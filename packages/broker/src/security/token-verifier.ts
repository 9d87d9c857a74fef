/**
 * Verifies bearer tokens: JWTs signed HS256 with a key of the keys file (`kid` picks it; any listed
 * key verifies), with `sub` and `exp`. The file is read again when it changes, so keys rotate
 * without a restart; a file that does not parse is refused with a log line and the keys before it
 * kept. Uses `jose` (a maintained JOSE implementation) rather than hand-made JWT code.
 */
import fs from 'node:fs/promises';
import type { Logger } from '@booblik/log';
import { type Clock, parseTokenKeys, type TokenKey, unrefTimer } from '@booblik/protocol';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';

/** How often the keys file is looked at for a change. */
export const tokenKeysReloadMs = 2000;

export interface VerifiedToken {
  subject: string;
  /** Unix ms. */
  expiresAtMs: number;
  groups: string[];
  /** Signed as a broker of the cluster (BROKER_CLAIM): it may replicate. */
  broker: boolean;
}

/** The claim a broker's own token carries: what lets a connection send REPLICATE. */
export const BROKER_CLAIM = 'booblik_broker';

/** Why a token was refused, for the client: never a key, never the token. */
export class TokenRefusal extends Error {
  override name = 'TokenRefusal';
}

export class TokenVerifier {
  private keys: TokenKey[] = [];
  private text = '';
  private timer: unknown;
  private closed = false;

  private constructor(
    private readonly file: string,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly wallNowMs: () => number,
  ) {}

  /** Reads the keys file; one that cannot be read or parsed stops the start (its error names the line). */
  static async open(
    file: string,
    logger: Logger,
    clock: Clock,
    wallNowMs: () => number,
  ): Promise<TokenVerifier> {
    const verifier = new TokenVerifier(file, logger, clock, wallNowMs);
    const text = await fs.readFile(file, 'utf8');
    verifier.keys = parseTokenKeys(text, file);
    verifier.text = text;
    verifier.schedule();
    return verifier;
  }

  get keyIds(): string[] {
    return this.keys.map((k) => k.id);
  }

  async verify(token: string): Promise<VerifiedToken> {
    let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
    try {
      ({ payload } = await jwtVerify(
        token,
        (header) => {
          const key = this.keys.find((k) => k.id === header.kid);
          if (key === undefined)
            throw new TokenRefusal('the token is signed with a key this broker does not know');
          return key.secret;
        },
        { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'], currentDate: new Date(this.wallNowMs()) },
      ));
    } catch (error) {
      if (error instanceof TokenRefusal) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new TokenRefusal('the token has expired');
      if (error instanceof joseErrors.JWTClaimValidationFailed)
        throw new TokenRefusal(`the token's claims are not valid (${error.claim})`);
      throw new TokenRefusal('the token is not a valid signed token');
    }
    const groups = Array.isArray(payload.groups) ? payload.groups.filter((g) => typeof g === 'string') : [];
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw new TokenRefusal('the token has no subject');
    return {
      subject: payload.sub,
      expiresAtMs: payload.exp! * 1000,
      groups,
      broker: payload[BROKER_CLAIM] === true,
    };
  }

  /** A token signed with the first key of the file (the one that signs). */
  async sign(
    subject: string,
    ttlMs: number,
    claims: Record<string, unknown> = {},
  ): Promise<{ token: string; expiresAtMs: number }> {
    const key = this.keys[0]!;
    const nowS = Math.floor(this.wallNowMs() / 1000);
    const expS = nowS + Math.ceil(ttlMs / 1000);
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: key.id })
      .setSubject(subject)
      .setIssuedAt(nowS)
      .setExpirationTime(expS)
      .sign(key.secret);
    return { token, expiresAtMs: expS * 1000 };
  }

  get now(): number {
    return this.wallNowMs();
  }

  close(): void {
    this.closed = true;
    this.clock.clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimeout(
      () => void this.reload().finally(() => this.schedule()),
      tokenKeysReloadMs,
    );
    unrefTimer(this.timer);
  }

  /** Takes a changed file; keeps the keys in use when it cannot be read or does not parse. */
  async reload(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (error) {
      this.logger.warn(
        `token keys file ${this.file} cannot be read (${(error as NodeJS.ErrnoException).code}); keeping the keys in use`,
      );
      return;
    }
    if (text === this.text) return;
    try {
      this.keys = parseTokenKeys(text, this.file);
      this.logger.info(
        `token keys reloaded from ${this.file}: ${this.keyIds.join(', ')} (${this.keyIds[0]} signs)`,
      );
    } catch (error) {
      this.logger.warn(`token keys file refused, keeping the keys in use: ${(error as Error).message}`);
    }
    this.text = text;
  }
}
