import type { Logger } from '@booblik/log';

interface StoreState {
  failing: boolean;
  sinceMs: number;
  lastError: string;
}

/**
 * Whether each store answers, as the persister last found it: a line is logged only when a store's
 * state changes (failing, then recovered), /readyz shows the failing ones, /metrics counts them.
 */
export class StoreHealth {
  private readonly states = new Map<string, StoreState>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  succeeded(url: string): void {
    const state = this.states.get(url);
    if (state?.failing) {
      this.logger.info(`store ${url}: recovered after ${this.now() - state.sinceMs} ms failing`);
    }
    if (state === undefined || state.failing) {
      this.states.set(url, { failing: false, sinceMs: this.now(), lastError: '' });
    }
  }

  failed(url: string, error: unknown): void {
    const state = this.states.get(url);
    const message = error instanceof Error ? error.message : String(error);
    if (state?.failing) {
      state.lastError = message;
      return;
    }
    this.logger.warn(`store ${url}: failing, uploads retry with backoff (segments stay on disk): ${message}`);
    this.states.set(url, { failing: true, sinceMs: this.now(), lastError: message });
  }

  /** No topic here uses the store any more: it is no longer reported, failing or not. */
  forget(url: string): void {
    const state = this.states.get(url);
    this.states.delete(url);
    if (state?.failing) this.logger.info(`store ${url}: no topic here uses it any more; no longer reported`);
  }

  isFailing(url: string): boolean {
    return this.states.get(url)?.failing ?? false;
  }

  get failingCount(): number {
    let n = 0;
    for (const s of this.states.values()) if (s.failing) n++;
    return n;
  }

  /** One line per failing store, for /readyz. */
  detail(): string[] {
    const lines: string[] = [];
    for (const [url, s] of this.states) {
      if (s.failing)
        lines.push(`store ${url}: failing since ${new Date(s.sinceMs).toISOString()}: ${s.lastError}`);
    }
    return lines;
  }
}
