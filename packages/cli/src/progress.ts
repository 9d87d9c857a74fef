import { PROGRESS_AFTER_RECORDS, PROGRESS_INTERVAL_MS } from './constants.js';

/**
 * One progress line on a terminal's stderr, redrawn in place. Silent unless the stream is a
 * terminal and the input turned out large, so pipes and small inputs stay clean.
 */
export class Progress {
  private drawnAt = Number.NEGATIVE_INFINITY;
  private drawn = false;
  private readonly startedAt: number;

  constructor(
    private readonly write: (text: string) => void,
    private readonly enabled: boolean,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.startedAt = now();
  }

  update(sent: number, acknowledged: number): void {
    if (!this.enabled || sent < PROGRESS_AFTER_RECORDS) return;
    const now = this.now();
    if (now - this.drawnAt < PROGRESS_INTERVAL_MS) return;
    this.drawnAt = now;
    this.drawn = true;
    const seconds = Math.max((now - this.startedAt) / 1000, 1e-3);
    const rate = Math.round(acknowledged / seconds);
    // \r returns to the line start, \x1b[K clears what a longer previous line left behind.
    this.write(`\r\x1b[K${fmt(sent)} records sent, ${fmt(acknowledged)} acknowledged (${fmt(rate)}/s)`);
  }

  /** Clears the line, so a final message starts clean. */
  done(): void {
    if (this.drawn) this.write('\r\x1b[K');
  }
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
