// A Node older than every supported one, as a user would run it: every entry point must refuse it in
// one line naming the supported versions, with exit code 2, before touching anything; never a stack
// trace from code that Node cannot parse. Run by scripts/node-versions.mjs for each refused release
// it pins, with BOOBLIK_REFUSED_NODE set to that release's `node`; skipped without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const oldNode = process.env.BOOBLIK_REFUSED_NODE;
const version = oldNode ? spawnSync(oldNode, ['--version'], { encoding: 'utf8' }).stdout.trim() : '';
const major = Number(version.replace(/^v/, '').split('.')[0]);
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const majors = pkg.engines.node.split('||').map((range) => Number(/\d+/.exec(range)[0]));
const named = `${majors.slice(0, -1).join(', ')} and ${majors.at(-1)}`;

/** Runs `argv` with the old Node first on the PATH, in a scratch working directory unless given. */
function underOldNode(argv, cwd) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-refusal-'));
  try {
    const env = { ...process.env, PATH: `${path.dirname(oldNode)}${path.delimiter}${process.env.PATH}` };
    for (const key of Object.keys(env)) if (/^npm_/i.test(key) || key === 'INIT_CWD') delete env[key];
    const r = spawnSync(argv[0], argv.slice(1), {
      cwd: cwd ?? scratch,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { ...r, leftBehind: fs.readdirSync(scratch) };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The refusal: exit 2 and, among stderr's lines, exactly one of ours and no stack trace. */
function assertRefused(r, program) {
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  const ours = lines.filter((l) => l.startsWith(`${program}: Node.js `));
  assert.equal(r.status, 2, `exit ${r.status}, stderr:\n${r.stderr}`);
  assert.equal(ours.length, 1, r.stderr);
  assert.match(
    ours[0],
    new RegExp(
      `^${program}: Node\\.js ${version.slice(1)} is not supported: booblik runs on Node\\.js ${named}`,
    ),
  );
  assert.doesNotMatch(r.stderr, /SyntaxError|\n\s+at /, 'no stack trace');
}

describe(`refused Node ${version || '(BOOBLIK_REFUSED_NODE not set)'}`, { skip: !oldNode }, () => {
  it('booblik-broker refuses it in one line with exit code 2 and creates no data directory', () => {
    const bin = path.join(root, 'packages/broker/bin/booblik-broker.js');
    const r = underOldNode([oldNode, bin, '--port=0', '--http.port=-1', '--data.dir=data']);
    assertRefused(r, 'booblik-broker');
    assert.equal(r.stdout, '');
    assert.deepEqual(r.leftBehind, []);
  });

  it('the booblik command refuses it in one line with exit code 2', () => {
    const r = underOldNode([oldNode, path.join(root, 'packages/cli/bin/booblik.js'), 'metadata']);
    assertRefused(r, 'booblik');
    assert.equal(r.stdout, '');
  });

  it('node packages/broker/dist/main.js refuses it in one line with exit code 2', (t) => {
    // The compiled broker is parsed before its first line runs: Nodes before 16 stop at its syntax
    // (`??=`), which is why the commands and npm scripts check before loading it.
    if (major < 16) return t.skip(`Node ${major} cannot parse the compiled broker`);
    const main = path.join(root, 'packages/broker/dist/main.js');
    if (!fs.existsSync(main)) return t.skip('the broker is not built');
    assertRefused(underOldNode([oldNode, main, '--port=0', '--data.dir=data']), 'booblik-broker');
  });

  it('npm start, npm test and npm run cluster check it before anything else', () => {
    for (const script of ['prestart', 'pretest', 'precluster']) {
      assert.match(pkg.scripts[script], /^node packages\/protocol\/node-support\.cjs && /, script);
    }
    assertRefused(underOldNode([oldNode, 'packages/protocol/node-support.cjs'], root), 'booblik');
  });

  it('npm start and npm test refuse it in one line with exit code 2', (t) => {
    // npm itself (this machine's) must run on that Node to get as far as the scripts.
    if (underOldNode(['npm', '--version']).status !== 0)
      return t.skip(`this npm does not run on Node ${major}`);
    // Arguments that keep a missed refusal small: a broker on port 0, only the lint step.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-refusal-data-'));
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const start = ['npm', 'start', '--', '--port=0', '--http.port=-1', `--data.dir=${scratch}/data`];
    assertRefused(underOldNode(start, root), 'booblik');
    assert.deepEqual(fs.readdirSync(scratch), []);
    assertRefused(underOldNode(['npm', 'test', '--', 'lint'], root), 'booblik');
  });
});
