import { spawn } from 'node:child_process';
import { brokerMain } from './entry-points.js';
import { WatchedProcess } from './watched-process.js';

/**
 * Starts the broker as the child of a parent that never reaps it (a shell that starts it, then becomes
 * `cat`, which never waits): a broker killed with SIGKILL stays a zombie until the parent ends, as
 * under a supervisor that is slow to reap. The parent ends when its stdin closes (`parent.proc.kill()`
 * or this test process's end), and the zombie is then reaped by init. Linux and macOS (needs /bin/sh).
 * `parent` has the broker's output (and `listening`); `brokerPid` resolves once it listens.
 */
export function startUnderNonReapingParent(args: string[]): {
  parent: WatchedProcess;
  brokerPid: Promise<number>;
} {
  const script = '"$@" </dev/null & echo "broker pid $!"; exec cat';
  const proc = spawn('/bin/sh', ['-c', script, 'sh', process.execPath, brokerMain, ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const parent = new WatchedProcess(proc, 'broker under a non-reaping parent');
  const brokerPid = parent.listening.then(() => {
    const m = /^broker pid (\d+)$/.exec(parent.lines.find((l) => l.startsWith('broker pid ')) ?? '');
    if (m === null) throw new Error(`no broker pid in the parent's output:\n${parent.output()}`);
    return Number(m[1]);
  });
  return { parent, brokerPid };
}
