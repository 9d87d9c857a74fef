/**
 * Runs `work` one pass at a time, for state that follows the keyspace copy: a request during a pass
 * runs one more pass after it (however many came), so a burst of changes costs two passes, not one
 * each, and no pass overlaps another.
 */
export class SerialRuns {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Asks for a pass; resolves once every pass asked for so far is done. */
  request(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop();
    return this.running;
  }

  /** No pass starts after this one (a pass under way finishes). */
  stop(): void {
    this.stopped = true;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        try {
          await this.work();
        } catch (error) {
          this.onError(error);
        }
      } while (this.again && !this.stopped);
    } finally {
      this.running = null;
    }
  }
}
