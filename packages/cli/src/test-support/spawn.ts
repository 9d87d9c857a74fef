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
  /**
   * Resolves with stdout so far once it contains `text`; rejects if the process ends first (with
   * its output in the message), so a test never waits on a command that is gone.
   */
  stdoutContains(text: string): Promise<string>;
  /** The same for stderr. */
  stderrContains(text: string): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Stops reading stdout, as `| head -1` does once it has its line: the command's next write gets EPIPE. */
  closeStdout(): void;
}

interface Watcher {
  text: string;
  resolve(sofar: string): void;
  reject(error: Error): void;
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
  let closed = false;
  const watching = { stdout: [] as Watcher[], stderr: [] as Watcher[] };
  const sofar = { stdout: () => Buffer.concat(out).toString(), stderr: () => err };
  const check = (stream: 'stdout' | 'stderr') => {
    const text = sofar[stream]();
    for (const w of watching[stream].splice(0)) {
      if (text.includes(w.text)) w.resolve(text);
      else watching[stream].push(w);
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    out.push(chunk);
    check('stdout');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    check('stderr');
  });
  child.stdin.on('error', () => {}); // a command that stops reading early is not a test failure
  child.stdin.end(options.input ?? '');
  const finished = new Promise<Finished>((resolve) => {
    child.on('close', (code) => {
      closed = true;
      for (const w of [...watching.stdout.splice(0), ...watching.stderr.splice(0)]) {
        w.reject(
          new Error(
            `exited (${code}) before printing ${JSON.stringify(w.text)}; stdout:\n${sofar.stdout()}\nstderr:\n${err}`,
          ),
        );
      }
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
  });
  const contains = (stream: 'stdout' | 'stderr') => (text: string) => {
    const now = sofar[stream]();
    if (now.includes(text)) return Promise.resolve(now);
    if (closed) return Promise.reject(new Error(`exited before printing ${JSON.stringify(text)}`));
    return new Promise<string>((resolve, reject) => watching[stream].push({ text, resolve, reject }));
  };
  return {
    finished,
    stdoutContains: contains('stdout'),
    stderrContains: contains('stderr'),
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
