/** Runs a built command as a child process, the way a user or the conformance harness would. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Finished {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** The built CLI entry point. */
export const booblikMain = fileURLToPath(new URL('../main.js', import.meta.url));

/** The conformance executable, a thin wrapper over `booblik conformance`. */
export const conformanceClient = fileURLToPath(
  new URL('../../../../conformance/clients/typescript', import.meta.url),
);

export interface Started {
  /** Resolves when the process has exited and its output is closed. */
  finished: Promise<Finished>;
  /** Resolves with stdout so far once it contains `text`. */
  stdoutContains(text: string): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Stops reading stdout, as `| head -1` does once it has its line: the command's next write gets EPIPE. */
  closeStdout(): void;
}

export function start(
  command: string[],
  options: { input?: string | Buffer; env?: Record<string, string | undefined> } = {},
): Started {
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let err = '';
  const watchers: { text: string; resolve(s: string): void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    out.push(chunk);
    const sofar = Buffer.concat(out).toString();
    for (const w of watchers.splice(0)) {
      if (sofar.includes(w.text)) w.resolve(sofar);
      else watchers.push(w);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  child.stdin.on('error', () => {}); // a command that stops reading early is not a test failure
  child.stdin.end(options.input ?? '');
  const finished = new Promise<Finished>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: err }));
  });
  return {
    finished,
    stdoutContains(text) {
      const sofar = Buffer.concat(out).toString();
      if (sofar.includes(text)) return Promise.resolve(sofar);
      return new Promise((resolve) => watchers.push({ text, resolve }));
    },
    kill: (signal) => child.kill(signal),
    closeStdout: () => child.stdout.destroy(),
  };
}

/** `booblik <args>` to completion. */
export function booblik(
  args: string[],
  options: { input?: string | Buffer; env?: Record<string, string | undefined> } = {},
): Promise<Finished> {
  return start([process.execPath, booblikMain, ...args], options).finished;
}
