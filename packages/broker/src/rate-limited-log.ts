import type { Logger } from '@booblik/log';

/**
 * Logs at most `perSecond` lines a second; what it drops is counted and reported with the next line
 * it lets through, so a flood of bad requests cannot flood the log but is never hidden.
 */
export class RateLimitedLog {
  private windowStart = 0;
  private inWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly perSecond = 10,
    private readonly now: () => number = Date.now,
  ) {}

  warn(message: string): void {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.perSecond) {
      this.suppressed++;
      return;
    }
    this.inWindow++;
    const note = this.suppressed > 0 ? ` (${this.suppressed} similar lines suppressed)` : '';
    this.suppressed = 0;
    this.logger.warn(message + note);
  }
}
