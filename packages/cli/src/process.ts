/** Wires a real process (argv, streams, signals, exit status) to run(). */
import { run } from './run.js';

export async function runProcess(argv: string[]): Promise<void> {
  const interrupted = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // The first signal stops cleanly; the handler is gone after it, so a second one kills at once.
    process.once(signal, () => interrupted.abort(new Error(`${signal} received`)));
  }
  process.exitCode = await run(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    stderrIsTty: process.stderr.isTTY === true,
    signal: interrupted.signal,
  });
  // A terminal's stdin stays open; nothing of ours is left running, so do not wait for it.
  process.stdin.unref?.();
}
