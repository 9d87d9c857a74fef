import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A child process's stdout as lines and its stderr as text, as they come, and waits on a line: the
 * one output reader of every process a test starts. The process needs stdout piped.
 */
export class ProcessLines {
  readonly lines: string[] = [];
  /** The exit, once the process is gone and its output is read to the end (no line comes later). */
  readonly closed: Promise<Exit>;
  private stderrText = '';
  private waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];

  /** `name` is what failure messages call the process. */
  constructor(
    proc: ChildProcess,
    private readonly name: string,
  ) {
    this.closed = new Promise((resolve) => proc.on('close', (code, signal) => resolve({ code, signal })));
    // Decoded as a stream, so a character split between two chunks stays whole. Not piped (inherited):
    // it goes to the test's own stderr, and is not kept.
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => {
      this.stderrText += d;
    });
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      this.lines.push(line);
      for (const w of [...this.waiters]) {
        const m = w.re.exec(line);
        if (m) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Every stdout line, then stderr. */
  output(): string {
    return `${this.lines.join('\n')}\n${this.stderrText}`;
  }

  /** The last lines of output, for failure messages. */
  tail(lines = 15): string {
    return `\n--- ${this.name} output ---\n${this.lines.slice(-lines).join('\n')}\n${this.stderrText.slice(-2000)}`;
  }

  /**
   * The first line (printed already, from line index `from` on, or still to come) matching `re`; fails
   * if the process ends first, or after `timeoutMs` (by default it waits as long as the process runs).
   */
  waitForLine(re: RegExp, timeoutMs = Number.POSITIVE_INFINITY, from = 0): Promise<RegExpExecArray> {
    for (const line of this.lines.slice(from)) {
      const m = re.exec(line);
      if (m) return Promise.resolve(m);
    }
    return new Promise((resolve, reject) => {
      const waiter = { re, resolve: (m: RegExpExecArray) => settle(() => resolve(m)) };
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(
            () =>
              settle(() =>
                reject(
                  new Error(`${this.name}: no line matching ${re} within ${timeoutMs} ms${this.tail()}`),
                ),
              ),
            timeoutMs,
          )
        : undefined;
      const settle = (then: () => void) => {
        clearTimeout(timer);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        then();
      };
      this.waiters.push(waiter);
      void this.closed.then((exit) =>
        settle(() =>
          reject(
            new Error(
              `${this.name} exited (${exit.code ?? exit.signal}) before a line matching ${re}${this.tail()}`,
            ),
          ),
        ),
      );
    });
  }
}
