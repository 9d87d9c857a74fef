import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it, type TestContext } from 'node:test';
import { ProcessLines } from './process-lines.js';

/** `source` run by Node, its output read by a ProcessLines; killed when the test ends. */
function run(t: TestContext, source: string): ProcessLines {
  const proc = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => proc.kill('SIGKILL'));
  return new ProcessLines(proc, 'child');
}

describe('ProcessLines', () => {
  it('waitForLine finds a line printed before the wait and one printed after it', async (t) => {
    const out = run(
      t,
      `console.log('first 1'); setTimeout(() => console.log('second 2'), 50); setInterval(() => {}, 1000);`,
    );
    assert.equal((await out.waitForLine(/^second (\d)$/, 10_000))[1], '2');
    assert.equal((await out.waitForLine(/^first (\d)$/, 10_000))[1], '1');
  });

  it('waitForLine from a line index skips a match printed before it', async (t) => {
    const out = run(
      t,
      `console.log('step 1'); setTimeout(() => console.log('step 2'), 50); setInterval(() => {}, 1000);`,
    );
    await out.waitForLine(/^step 1$/, 10_000);
    assert.equal((await out.waitForLine(/^step (\d)$/, 10_000, out.lines.length))[1], '2');
  });

  it('waitForLine fails after its timeout naming what it waited for, with the output so far', async (t) => {
    const out = run(t, `console.log('only this'); setInterval(() => {}, 1000);`);
    await out.waitForLine(/^only this$/, 10_000);
    await assert.rejects(
      out.waitForLine(/never/, 100),
      /child: no line matching \/never\/ within 100 ms(.|\n)*only this/,
    );
  });

  it('a line split across writes and multi-byte characters split across chunks arrive whole', async (t) => {
    const out = run(
      t,
      `process.stdout.write('hal'); setTimeout(() => { process.stdout.write('f\\n'); process.stderr.write(Buffer.from('ü').subarray(0, 1)); process.stderr.write(Buffer.from('ü').subarray(1)); }, 20);`,
    );
    await out.closed;
    assert.deepEqual(out.lines, ['half']);
    assert.equal(out.stderr, 'ü');
  });
});
