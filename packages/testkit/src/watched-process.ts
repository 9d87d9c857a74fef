import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { brokerMain, cliMain, LISTENING_LINE } from './entry-points.js';
import { dyingWithParent } from './parent-death.js';
import { ProcessLines } from './process-lines.js';

/** How long `exitCode()` waits unless told otherwise. */
const EXIT_TIMEOUT_MS_DEFAULT = 20_000;

/**
 * A started child process as a test sees it: its lines, its exit code, and (for a broker) the port
 * of its `booblik listening on` line. Nothing stops it at the end of a test: its caller does.
 */
export class WatchedProcess {
  readonly lines: string[];
  /** The exit code, once it exited and its output was read to the end. */
  readonly exited: Promise<number | null>;
  /** The port of its `booblik listening on` line; rejects if it exits first. */
  readonly listening: Promise<number>;
  private readonly out: ProcessLines;

  constructor(
    readonly proc: ChildProcessByStdio<Writable | null, Readable, Readable>,
    /** What failure messages call it. */
    name: string,
  ) {
    this.out = new ProcessLines(proc, name);
    this.lines = this.out.lines;
    this.exited = this.out.closed.then((exit) => exit.code);
    this.listening = this.out.waitForLine(LISTENING_LINE).then((m) => Number(m[2]));
    this.listening.catch(() => {}); // a test that expects an early exit never awaits it
  }

  stderr(): string {
    return this.out.stderr;
  }

  /** Every stdout line, then stderr. */
  output(): string {
    return this.out.output();
  }

  /** The HTTP port of its `booblik listening on` line (NaN before that line, or without HTTP). */
  httpPort(): number {
    const listening = this.lines.find((l) => LISTENING_LINE.test(l)) ?? '';
    return Number(LISTENING_LINE.exec(listening)?.[3]);
  }

  /** The exit code; a process still running after `timeoutMs` is SIGKILLed by pid and the wait fails. */
  async exitCode(timeoutMs = EXIT_TIMEOUT_MS_DEFAULT): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        killQuietly(this.proc.pid!);
        reject(new Error(`still running after ${timeoutMs} ms:\n${this.output()}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Starts a Node entry point (by default the broker's `main.js`) with `args`, in an environment of
 * only PATH and `env`: BOOBLIK_* variables of the test run must not configure it.
 */
export function startProcess(
  args: string[],
  env: Record<string, string> = {},
  entry = brokerMain,
): WatchedProcess {
  const [command, argv] = dyingWithParent(process.execPath, [entry, ...args]);
  const proc = spawn(command, argv, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new WatchedProcess(proc, entry);
}

/** The `booblik` command line as a child process. */
export function startCli(args: string[]): WatchedProcess {
  return startProcess(args, {}, cliMain);
}
