import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { describe, it } from 'node:test';
import { LISTENING_LINE, ProcessLines, tempDir } from '@booblik/testkit';

/** Longer than npm takes to forward a signal, shorter than the broker's repeated-signal window. */
const FORWARDED_SIGNAL_WINDOW_MS = 300;

const repoRoot = new URL('../../../', import.meta.url).pathname;

/**
 * `npm start` exactly as the README gives it, from the repository root, with a temporary data
 * directory and a free port. `detached` puts npm in a process group of its own, as a terminal's
 * foreground job is, so a test can signal the whole group the way Ctrl-C does.
 */
function npmStart(dataDir: string, detached = false) {
  const proc = spawn('npm', ['start', '--', '--port=0', '--http.port=-1', `--data.dir=${dataDir}`], {
    cwd: repoRoot,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  const out = new ProcessLines(proc, 'npm start');
  const exited = out.closed.then((exit) => exit.code);
  const started = out.waitForLine(LISTENING_LINE).then((listening) => {
    const pid = out.lines.map((l) => /booblik starting \(pid (\d+)\)/.exec(l)).find((m) => m !== null);
    return { port: Number(listening[2]), brokerPid: Number(pid?.[1] ?? 0) };
  });
  started.catch(() => {});
  return { proc, out, exited, started };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** The broker (not npm) must be gone: killed here if not, so a failing test leaves nothing running. */
async function assertStopped(run: ReturnType<typeof npmStart>, brokerPid: number, port: number) {
  const code = await run.exited;
  const orphan = isRunning(brokerPid);
  if (orphan) process.kill(brokerPid, 'SIGKILL');
  const output = run.out.output();
  assert.ok(!orphan, `the broker (pid ${brokerPid}) outlived npm:\n${output}`);
  assert.ok(await portRefuses(port), 'the port is free');
  assert.ok(output.includes('booblik stopped'), output);
  assert.ok(!output.includes('exiting at once'), output);
  assert.equal(code, 0, output);
}

describe('npm start', { timeout: 180_000 }, () => {
  it('SIGTERM to the npm process stops the broker cleanly: "booblik stopped", port freed, exit 0, no broker left', async (t) => {
    const run = npmStart(tempDir(t));
    t.after(() => run.proc.kill('SIGKILL'));
    const { port, brokerPid } = await run.started;
    assert.ok(brokerPid > 0 && brokerPid !== run.proc.pid);
    run.proc.kill('SIGTERM'); // the pid `npm start &` gives a shell or a supervisor, and nothing else
    await assertStopped(run, brokerPid, port);
  });

  it('Ctrl-C (SIGINT to the foreground group, which npm forwards again) stops it cleanly, not "at once"', async (t) => {
    const run = npmStart(tempDir(t), true);
    t.after(() => run.proc.kill('SIGKILL'));
    const { port, brokerPid } = await run.started;
    // A client that keeps its side open holds the shutdown until it leaves, so the second copy of the
    // signal lands while the broker is still stopping (an idle broker is gone within a millisecond).
    const lingering = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    lingering.on('error', () => {}); // a reset as the broker closes is fine
    await new Promise((resolve) => lingering.once('connect', resolve));
    process.kill(-run.proc.pid!, 'SIGINT');
    await run.out.waitForLine(/SIGINT: shutting down/, 10_000);
    // npm's forwarded copy lands within milliseconds, unless the kernel merged it with the terminal's
    // (two SIGINTs pending at once are delivered as one): give it that long, then let the broker stop.
    await new Promise((resolve) => setTimeout(resolve, FORWARDED_SIGNAL_WINDOW_MS));
    lingering.end();
    await assertStopped(run, brokerPid, port);
  });
});
