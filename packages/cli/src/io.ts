import { once } from 'node:events';
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

/**
 * A writer that respects backpressure and notices when the reader went away (`booblik consume | head`):
 * then write() returns false and the command stops quietly instead of dying on EPIPE.
 */
export class Output {
  private gone = false;

  constructor(private readonly stream: Writable) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') this.gone = true;
      else throw error;
    });
  }

  /** False when nobody reads any more. */
  get open(): boolean {
    return !this.gone;
  }

  async write(data: string | Uint8Array): Promise<boolean> {
    if (this.gone) return false;
    if (!this.stream.write(data)) {
      await Promise.race([once(this.stream, 'drain'), once(this.stream, 'close')]);
    }
    return !this.gone;
  }
}
