import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

const main = new URL('../main.js', import.meta.url).pathname;
const cliMain = new URL('../../../cli/dist/main.js', import.meta.url).pathname;

/**
 * Starts the real entry point (`main.js`) as a child process. `listening` resolves with the port once
 * it logged `booblik listening on`, and rejects if it exits first; `output()` is stdout and stderr.
 */
export function startProcess(args: string[], env: Record<string, string> = {}, entry = main) {
  const proc = spawn(process.execPath, [entry, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(proc);
}

/**
 * Starts the broker as the child of a parent that never reaps it (a shell that starts it, then becomes
 * `cat`, which never waits): a broker killed with SIGKILL stays a zombie until the parent ends, as
 * under a supervisor that is slow to reap. The parent ends when its stdin closes (`parent.proc.kill()`
 * or this test process's end), and the zombie is then reaped by init. Linux and macOS (needs /bin/sh).
 */
export function startUnderNonReapingParent(args: string[]) {
  const script = '"$@" </dev/null & echo "broker pid $!"; exec cat';
  const proc = spawn('/bin/sh', ['-c', script, 'sh', process.execPath, main, ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const parent = watch(proc);
  const brokerPid = parent.listening.then(() => {
    const m = /^broker pid (\d+)$/.exec(parent.lines.find((l) => l.startsWith('broker pid ')) ?? '');
    if (m === null) throw new Error(`no broker pid in the parent's output:\n${parent.output()}`);
    return Number(m[1]);
  });
  return { parent, brokerPid };
}

/** Lines, exit and `booblik listening on` of a started process (see startProcess). */
function watch(proc: ChildProcessByStdio<Writable | null, Readable, Readable>) {
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  let stderr = '';
  proc.stderr.on('data', (d) => {
    stderr += d;
  });
  const listening = new Promise<number>((resolve, reject) => {
    createInterface({ input: proc.stdout }).on('line', (line) => {
      lines.push(line);
      const m = /booblik listening on [^\s]+:(\d+)/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
  });
  listening.catch(() => {}); // a test that expects an early exit never awaits it
  const httpPort = () =>
    Number(/http on [^\s]+:(\d+)/.exec(lines.find((l) => l.includes('http on')) ?? '')?.[1]);
  const output = () => `${lines.join('\n')}\n${stderr}`;
  /** The exit code; a process still running after `timeoutMs` is killed and the wait fails. */
  const exitCode = async (timeoutMs = 20_000): Promise<number | null> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`still running after ${timeoutMs} ms:\n${output()}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([exited, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  return { proc, lines, exited, exitCode, listening, stderr: () => stderr, output, httpPort };
}

/** The `booblik` command line as a child process (`exitCode()` and `output()` as for a broker). */
export function startCli(args: string[]) {
  return startProcess(args, {}, cliMain);
}
