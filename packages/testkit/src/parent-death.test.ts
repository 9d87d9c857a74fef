import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitUntil } from './wait.js';

const parentDeath = fileURLToPath(new URL('./parent-death.js', import.meta.url));

/** Running: a zombie left for a parent that does not reap (some containers' init) counts as dead. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true; // no /proc here: signal 0 said it exists
  }
}

function isSleep(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('sleep');
  } catch {
    return false;
  }
}

test('a command started with dyingWithParent is killed when the process that started it is SIGKILLed', async (t) => {
  // The parent: starts `sleep 60` as a broker would be started, prints its pid, then waits.
  const script = `
    const { spawn } = require('node:child_process');
    import(${JSON.stringify(parentDeath)}).then(({ dyingWithParent }) => {
      const [command, args] = dyingWithParent('sleep', ['60']);
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      console.log(child.pid);
      setInterval(() => {}, 1000);
    });`;
  const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => parent.kill('SIGKILL'));
  const [line] = await createInterface({ input: parent.stdout })
    [Symbol.asyncIterator]()
    .next()
    .then((r) => [r.value as string]);
  const pid = Number(line);
  t.after(() => {
    // Only our `sleep`: once it is gone its pid may be another process's (pids wrap at 32768 here).
    if (alive(pid) && isSleep(pid)) process.kill(pid, 'SIGKILL');
  });
  assert.ok(pid > 0 && alive(pid), `the child runs (${line})`);
  parent.kill('SIGKILL');
  await waitUntil(() => !alive(pid), 'the child to die with its parent');
});
