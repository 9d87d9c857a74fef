import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { tempDir } from './temp-dir.js';
import { startProcess } from './watched-process.js';

/** Starts `source` as a Node entry point; killed when the test ends. */
function startScript(t: TestContext, source: string) {
  const entry = path.join(tempDir(t, 'watched'), 'entry.mjs');
  fs.writeFileSync(entry, source);
  const p = startProcess([], {}, entry);
  t.after(() => p.proc.kill('SIGKILL'));
  return p;
}

const RUN_UNTIL_KILLED = 'setInterval(() => {}, 1000);';

describe('WatchedProcess', () => {
  it('listening and httpPort are the ports of the `booblik listening on` line', async (t) => {
    const p = startScript(
      t,
      `console.log('booblik starting'); console.log('booblik listening on 127.0.0.1:4242, http on 127.0.0.1:4343'); ${RUN_UNTIL_KILLED}`,
    );
    assert.equal(await p.listening, 4242);
    assert.equal(p.httpPort(), 4343);
  });

  it('listening fails once the process exits without that line, and the exit has all its output', async (t) => {
    const p = startScript(
      t,
      `for (let i = 0; i < 1000; i++) console.log('line ' + i); console.error('configuration error'); process.exitCode = 2;`,
    );
    await assert.rejects(p.listening, /exited \(2\) before a line matching .*configuration error/s);
    assert.equal(await p.exitCode(), 2);
    assert.equal(p.lines.length, 1000, 'every line was read before the exit was reported');
    assert.equal(p.lines.at(-1), 'line 999');
    assert.match(p.stderr(), /^configuration error\n$/);
    assert.match(p.output(), /line 999\nconfiguration error/);
  });

  // The timeout turns a kill that never happens into a failure rather than a hung run.
  it('exitCode of a process still running after the timeout kills it and fails naming the wait', {
    timeout: 10_000,
  }, async (t) => {
    const p = startScript(t, `console.log('still here'); ${RUN_UNTIL_KILLED}`);
    await assert.rejects(p.exitCode(200), /still running after 200 ms:\n(.|\n)*still here/);
    assert.equal(await p.exited, null, 'killed by a signal');
    assert.equal(p.proc.signalCode, 'SIGKILL');
  });
});
