import type { Writable } from 'node:stream';

/** What a command may touch of the process: tests hand in their own. */
export interface Io {
  stdin: AsyncIterable<Buffer | string>;
  stdout: Writable;
  stderr: Writable;
  env: Record<string, string | undefined>;
  /** Progress lines are drawn only on a terminal. */
  stderrIsTty: boolean;
  /** Fires on SIGINT or SIGTERM: long-running verbs stop cleanly and exit 0. */
  signal: AbortSignal;
}

/** The reader went away (`booblik consume | head -1`): not a failure, the command just stops. */
function readerGone(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';
}

/**
 * A writer that respects backpressure and notices when the reader went away (`booblik consume | head`):
 * then write() returns false and the command stops quietly instead of dying on EPIPE.
 */
export class Output {
  private gone = false;
  private failure: Error | undefined;
  /**
   * One wait for 'drain', shared by every write held back and its listeners removed once it ends: a
   * listener added per wait and left behind piles up on a slow pipe (MaxListenersExceededWarning).
   */
  private drained: Promise<void> | undefined;

  constructor(private readonly stream: Writable) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (readerGone(error)) this.gone = true;
      else this.failure ??= error;
    });
  }

  /** False when nobody reads any more. */
  get open(): boolean {
    return !this.gone;
  }

  /** Resolves once the stream takes more; false when nobody reads any more; rejects on another write error. */
  async write(data: string | Uint8Array): Promise<boolean> {
    if (this.failure) throw this.failure;
    if (this.gone) return false;
    if (!this.stream.write(data)) await this.drain();
    if (this.failure) throw this.failure;
    return !this.gone;
  }

  private drain(): Promise<void> {
    this.drained ??= new Promise<void>((resolve) => {
      const events = ['drain', 'close', 'error'] as const;
      const done = () => {
        for (const event of events) this.stream.off(event, done);
        this.drained = undefined;
        resolve();
      };
      for (const event of events) this.stream.on(event, done);
    });
    return this.drained;
  }
}
