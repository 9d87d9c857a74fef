import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import nodeSupport from '@booblik/protocol/node-support';
import { startProcess, tempDir } from '@booblik/testkit';

const bin = new URL('../bin/booblik-broker.js', import.meta.url).pathname;
/** What this Node should hear at start: on Node 20 (past its end of life) a warning, on 22+ nothing. */
const expected = nodeSupport.nodeSupport(process.versions.node, new Date()).warning;

describe(`booblik-broker on Node ${process.versions.node}`, () => {
  for (const [entry, path] of [
    ['dist/main.js', undefined],
    ['bin/booblik-broker.js', bin],
  ] as const) {
    it(`${entry} serves, warning once at start only on a Node past its end of life or never tested`, async (t) => {
      const p = startProcess(['--port=0', '--http.port=-1', `--data.dir=${tempDir(t)}`], {}, path);
      t.after(() => p.proc.kill('SIGKILL'));
      await p.listening;
      const warnings = p
        .output()
        .split('\n')
        .filter((l) => /Node\.js \S+ is (past its end|not a version)/.test(l));
      assert.deepEqual(
        warnings.map((l) => l.replace(/^\S+ /, '')),
        expected ? [`WARN ${expected}`] : [],
        p.output(),
      );
      p.proc.kill('SIGTERM');
      assert.equal(await p.exitCode(), 0);
    });
  }
});
