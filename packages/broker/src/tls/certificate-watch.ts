/**
 * The broker's current TLS credentials, reread when their files change: the files are polled every
 * `pollMs` on the injected clock (they are replaced by rename, which fs.watch misses on some file
 * systems, so polling is the one mechanism). New connections get the new SecureContext; live ones
 * keep theirs. A new set that does not parse or does not match is refused with one log line naming
 * the file, and the old one stays.
 */

import type tls from 'node:tls';
import type { Logger } from '@booblik/log';
import type { Clock, TimerHandle } from '@booblik/protocol';
import {
  buildCredentials,
  type Credentials,
  readTlsFiles,
  sameContents,
  type TlsContents,
  TlsFileError,
  type TlsFiles,
} from './credentials.js';

/** How often the files are read again: well inside the 10 s a replaced certificate must take. */
export const TLS_POLL_MS_DEFAULT = 2000;
/** A certificate this close to its end gets a warning line (once per certificate). */
export const EXPIRY_WARNING_MS = 14 * 24 * 3600 * 1000;

export interface CertificateWatchOptions {
  logger: Logger;
  clock: Clock;
  /** Wall time, Unix ms (expiry is a date, not a duration). */
  wallNowMs?: () => number;
  pollMs?: number;
}

export class CertificateWatch {
  private current: Credentials;
  /** The contents last refused: not tried (nor logged) again until a file changes once more. */
  private refused: TlsContents | null = null;
  private timer: TimerHandle | undefined;
  private closed = false;
  private readonly warned = new Set<string>();
  private readonly listeners = new Set<() => void>();
  private readonly wallNowMs: () => number;
  private readonly pollMs: number;

  /** Reads and checks the files now; throws TlsFileError naming the one at fault. */
  constructor(
    private readonly files: TlsFiles,
    private readonly options: CertificateWatchOptions,
  ) {
    this.wallNowMs = options.wallNowMs ?? Date.now;
    this.pollMs = options.pollMs ?? TLS_POLL_MS_DEFAULT;
    this.current = buildCredentials(files, readTlsFiles(files));
    this.checkExpiry();
    this.schedule();
  }

  /** The SecureContext a new connection gets. */
  get context(): tls.SecureContext {
    return this.current.context;
  }

  /** The same as the options tls.createSecureContext takes (a tls.Server's setSecureContext). */
  get contextOptions(): tls.SecureContextOptions {
    const { cert, key, ca } = this.current.contents;
    return { cert, key, ...(ca === null ? {} : { ca }) };
  }

  get certExpiresAtMs(): number {
    return this.current.certExpiresAtMs;
  }

  get caExpiresAtMs(): number | null {
    return this.current.caExpiresAtMs;
  }

  /** Whether the broker's own certificate has expired (then /readyz fails). */
  get certExpired(): boolean {
    return this.wallNowMs() >= this.current.certExpiresAtMs;
  }

  /** Called after each new set of credentials is taken (tests wait on it). */
  onReload(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    this.options.clock.clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.options.clock.setTimeout(() => this.poll(), this.pollMs);
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  /** Reads the files again; takes them if they changed and hold together. */
  poll(): void {
    try {
      this.look();
    } finally {
      this.checkExpiry();
      this.schedule();
    }
  }

  private look(): void {
    let contents: TlsContents;
    try {
      contents = readTlsFiles(this.files);
    } catch (error) {
      // A file gone for good is worth one line; it is looked for again at each poll.
      this.refuse(error, null);
      return;
    }
    if (sameContents(contents, this.current.contents)) {
      this.refused = null;
      return;
    }
    if (this.refused && sameContents(contents, this.refused)) return;
    let next: Credentials;
    try {
      next = buildCredentials(this.files, contents);
    } catch (error) {
      this.refuse(error, contents);
      return;
    }
    this.current = next;
    this.refused = null;
    this.options.logger.info(
      `tls: certificates reloaded from ${this.files.cert}${this.files.ca ? ` and ${this.files.ca}` : ''}; new connections use them`,
    );
    for (const listener of [...this.listeners]) listener();
  }

  private lastUnreadable = '';

  private refuse(error: unknown, contents: TlsContents | null): void {
    if (!(error instanceof TlsFileError)) throw error;
    if (contents === null) {
      if (this.lastUnreadable === error.message) return;
      this.lastUnreadable = error.message;
    } else {
      this.lastUnreadable = '';
      this.refused = contents;
    }
    this.options.logger.warn(`tls: new files refused, the old ones kept: ${error.message}`);
  }

  /** One warning per certificate when 14 days or less remain, and one when it has expired. */
  private checkExpiry(): void {
    const now = this.wallNowMs();
    const check = (what: string, file: string, atMs: number | null) => {
      if (atMs === null) return;
      const stage = now >= atMs ? 'expired' : now >= atMs - EXPIRY_WARNING_MS ? 'soon' : null;
      if (stage === null) return;
      const key = `${what}:${atMs}:${stage}`;
      if (this.warned.has(key)) return;
      this.warned.add(key);
      const at = new Date(atMs).toISOString();
      this.options.logger.warn(
        stage === 'expired'
          ? `tls: the ${what} in ${file} expired at ${at}${what === 'certificate' ? ': /readyz fails until it is replaced' : ''}`
          : `tls: the ${what} in ${file} expires at ${at} (${Math.ceil((atMs - now) / 86_400_000)} days left)`,
      );
    };
    check('certificate', this.files.cert, this.current.certExpiresAtMs);
    check('CA certificate', this.files.ca, this.current.caExpiresAtMs);
  }
}
