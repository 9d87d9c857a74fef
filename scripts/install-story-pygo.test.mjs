// The install recipes of the Python and Go clients' READMEs, tried from this clone as a user would:
// `pip install clients/python` into a fresh virtual environment, and a new Go module that reaches
// clients/go through a `replace` (the Go README's commands, read from it). Each must work, and neither may leave a file in the clone (no
// build/, no *.egg-info, nothing untracked or ignored that was not there before).
//
//   node --test scripts/install-story-pygo.test.mjs      (the install-story-pygo step of npm test)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const goModule = 'github.com/youndie/booblik/clients/go';

/** Runs a command to completion; fails the test with its output when it exits non-zero. */
function run(argv, options = {}) {
  const result = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 300_000, ...options });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.equal(result.status, 0, `${argv.join(' ')} failed (${result.error ?? result.status}):\n${output}`);
  return result.stdout;
}

/**
 * Every untracked or ignored path in the clone: the whole tree with ignored folders collapsed,
 * and each single file under the clients, where a build would leave its litter.
 */
function strayFiles() {
  const status = (...args) =>
    run(['git', 'status', '--porcelain', '--ignored', ...args], { cwd: root })
      .split('\n')
      .filter((line) => line.startsWith('??') || line.startsWith('!!'));
  return new Set([
    ...status(),
    ...status('--untracked-files=all', '--ignored=matching', '--', 'clients/python', 'clients/go'),
  ]);
}

function newStrayFiles(before) {
  return [...strayFiles()].filter((line) => !before.has(line));
}

/** A temporary folder outside the clone, removed when the test ends. */
function scratch(t, name) {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), `booblik-${name}-`)));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const isGitClone = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: root }).status === 0;
const noGit = isGitClone ? false : 'not a git clone: the check for files left behind needs git status';

test('python: pip install of clients/python into a fresh venv imports, and leaves nothing in the clone', {
  skip: noGit,
}, (t) => {
  const before = strayFiles();
  const dir = scratch(t, 'pip');
  const venv = path.join(dir, 'venv');
  run(['python3', '-m', 'venv', venv]);
  const python = path.join(venv, 'bin', 'python');
  // The README's command, from the root of the clone.
  run([python, '-m', 'pip', 'install', '--quiet', './clients/python'], { cwd: root });
  // Imported from outside the clone, so it is the installed copy that answers.
  const imported = run(
    [
      python,
      '-c',
      'import booblik, booblik.aio; print(booblik.__file__); print(booblik.BrokerError(6, "PRODUCE t/0").retriable)',
    ],
    { cwd: dir },
  ).split('\n');
  assert.ok(imported[0].startsWith(venv), `booblik imported from ${imported[0]}, not from the venv`);
  assert.equal(imported[1], 'True');
  assert.deepEqual(newStrayFiles(before), [], 'pip install left files in the clone');
});

/**
 * The commands of clients/go/README.md's local-clone recipe (the indented block after "From a local
 * clone instead"), with the clone's path in place of the README's placeholder: what a user runs.
 */
function goReadmeRecipe() {
  const readme = readFileSync(path.join(root, 'clients', 'go', 'README.md'), 'utf8').split('\n');
  const start = readme.findIndex((line) => line.startsWith('From a local clone instead'));
  assert.ok(start >= 0, 'clients/go/README.md: the local-clone recipe is gone');
  const block = [];
  for (const line of readme.slice(start + 1)) {
    if (line.startsWith('    ')) block.push(line.trim());
    else if (block.length > 0) break;
  }
  assert.ok(block.length > 0, 'clients/go/README.md: the local-clone recipe has no commands');
  return block.map((line) => line.replaceAll('/path/to/booblik', root).split(/\s+/));
}

test('go: the README recipe (a replace to clients/go) builds and runs with the default GOPROXY, and leaves nothing in the clone', {
  skip: noGit,
}, (t) => {
  const before = strayFiles();
  const dir = scratch(t, 'go');
  // A user's environment: the default module proxy (the recipe must not need it) and no workspace.
  const { GOPROXY: _proxy, GOFLAGS: _flags, GONOSUMDB: _nosum, ...user } = process.env;
  const env = { ...user, GOWORK: 'off' };
  run(['go', 'mod', 'init', 'example.com/booblik-install-story'], { cwd: dir, env });
  writeFileSync(
    path.join(dir, 'main.go'),
    `package main

import (
	"fmt"

	booblik "${goModule}"
)

func main() {
	fmt.Println(booblik.CodeStorageError, booblik.CodeStorageError.Retriable(), booblik.DefaultMaxBatchSize)
}
`,
  );
  // The README's recipe, command by command, once the program imports the package.
  for (const argv of goReadmeRecipe()) run(argv, { cwd: dir, env });
  assert.equal(run(['go', 'run', '.'], { cwd: dir, env }), 'STORAGE_ERROR true 100\n');
  assert.deepEqual(newStrayFiles(before), [], 'building through the replace left files in the clone');
});
