#!/usr/bin/env node
// The whole test suite, one command: lint, type-check and build, the TypeScript tests, the Python and
// Go clients, and the conformance kit against a real broker. Each step runs as a child process with
// its output streamed; the last line is the summary CI reads: "N passed, M failed".
//
//   npm test                   everything
//   npm test -- ts go          only the named steps (lint, build, ts, ts-fallback, install-story, python, go,
//                              install-story-pygo, conformance-selftest, conformance)
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = new Set(process.argv.slice(2));

/** Every compiled test file under a package's dist/ (tests live beside the code they test). */
function compiledTests() {
  const found = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.test.js') && hasSource(full)) found.push(path.relative(root, full));
    }
  };
  // tsc -b never deletes output: a test whose source was removed or renamed must not run from dist/.
  const hasSource = (compiled) => {
    const source = compiled.replace(`${path.sep}dist${path.sep}`, `${path.sep}src${path.sep}`);
    return existsSync(source.replace(/\.js$/, '.ts')) || existsSync(source.replace(/\.js$/, '.mts'));
  };
  const packages = path.join(root, 'packages');
  const dists = existsSync(packages)
    ? readdirSync(packages).map((pkg) => path.join(packages, pkg, 'dist'))
    : [];
  // The reliability suite and the benchmarks are workspace packages of their own, at the root.
  dists.push(path.join(root, 'test', 'dist'), path.join(root, 'bench', 'dist'));
  for (const dist of dists) if (existsSync(dist)) walk(dist);
  return found.sort();
}

// Each parser reads a step's output and returns { passed, failed } counts of individual tests.
const parse = {
  node(out) {
    const pass = /^(?:#|ℹ) pass (\d+)/m.exec(out);
    const fail = /^(?:#|ℹ) fail (\d+)/m.exec(out);
    // A test cut off by its file's time bound is reported cancelled, not failed: it counts as failed.
    const cancelled = /^(?:#|ℹ) cancelled (\d+)/m.exec(out);
    return pass && fail
      ? { passed: Number(pass[1]), failed: Number(fail[1]) + Number(cancelled?.[1] ?? 0) }
      : null;
  },
  python(out) {
    const ran = [...out.matchAll(/^Ran (\d+) tests?/gm)];
    if (ran.length === 0) return null;
    let total = 0;
    let failed = 0;
    for (const m of ran) total += Number(m[1]);
    for (const m of out.matchAll(/^FAILED \(([^)]*)\)/gm)) {
      for (const part of m[1].matchAll(/(?:failures|errors)=(\d+)/g)) failed += Number(part[1]);
    }
    return { passed: total - failed, failed };
  },
  go(out) {
    const passed = (out.match(/^\s*--- PASS/gm) ?? []).length;
    const failed = (out.match(/^\s*--- FAIL/gm) ?? []).length;
    return passed + failed > 0 ? { passed, failed } : null;
  },
  conformance(out) {
    let passed = 0;
    let failed = 0;
    for (const m of out.matchAll(/^(\d+) passed, (\d+) failed/gm)) {
      passed += Number(m[1]);
      failed += Number(m[2]);
    }
    return passed + failed > 0 ? { passed, failed } : null;
  },
};

// Bounds, so that a hung test fails with its name instead of holding CI until its own limit. A test
// file's time: on Node 20 and 22 --test-timeout bounds a whole file, on 24 and later each test in it;
// the longest file runs about 2 minutes. No --test-force-exit: on Node 22 it once ended a file part
// way through its tests (config/load.test.js) with no failure reported, its later tests never run.
const FILE_TIMEOUT_MS = 10 * 60 * 1000;
const nodeTest = ['node', '--test', '--test-reporter=spec', `--test-timeout=${FILE_TIMEOUT_MS}`];
// A step's time, past which its whole process group is killed and the step fails as timed out.
const STEP_TIMEOUT_MS = 40 * 60 * 1000;
/** After a step exits, how long its output pipes may stay open (held by a process it left behind). */
const PIPE_GRACE_MS = 10 * 1000;

const steps = [
  { name: 'lint', cmd: ['npx', 'biome', 'check', '.'] },
  { name: 'build', cmd: ['npx', 'tsc', '-b'] },
  {
    name: 'ts',
    when: () => compiledTests().length > 0,
    cmd: () => [...nodeTest, '--test-concurrency=2', ...compiledTests()],
    parse: parse.node,
  },
  {
    // The same storage and codec tests without the native module: the TypeScript fallback must hold too.
    name: 'ts-fallback',
    when: () => compiledTests().length > 0,
    cmd: () => [
      ...nodeTest,
      '--test-concurrency=2',
      ...compiledTests().filter((f) => /^packages\/(protocol|log)\//.test(f)),
    ],
    env: { BOOBLIK_NATIVE: '0' },
    parse: parse.node,
  },
  {
    // The TypeScript client's install recipes from an unbuilt clone of HEAD (needs the registry for
    // the clone's own dev dependencies).
    name: 'install-story',
    when: () => existsSync(path.join(root, 'scripts/install-story.test.mjs')),
    cmd: [...nodeTest, 'scripts/install-story.test.mjs'],
    parse: parse.node,
  },
  {
    name: 'python',
    when: () => existsSync(path.join(root, 'clients/python/tests')),
    cmd: ['python3', '-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'],
    cwd: 'clients/python',
    parse: parse.python,
  },
  {
    name: 'go',
    when: () => existsSync(path.join(root, 'clients/go/go.mod')),
    cmd: [
      'sh',
      '-c',
      'test -z "$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }; ' +
        'go vet ./... && go test -race -count=1 -v ./...',
    ],
    cwd: 'clients/go',
    parse: parse.go,
  },
  {
    // The Python and Go READMEs' install recipes, tried from this clone (pip into a fresh venv, a Go
    // module with a replace), leaving no file behind in it.
    name: 'install-story-pygo',
    when: () =>
      existsSync(path.join(root, 'clients/python/pyproject.toml')) &&
      existsSync(path.join(root, 'clients/go/go.mod')),
    cmd: [...nodeTest, 'scripts/install-story-pygo.test.mjs'],
    parse: parse.node,
  },
  {
    name: 'conformance-selftest',
    when: () => existsSync(path.join(root, 'conformance/tests')),
    cmd: ['python3', '-m', 'unittest', 'discover', '-s', 'conformance/tests', '-t', 'conformance'],
    parse: parse.python,
  },
  {
    name: 'conformance',
    when: () => existsSync(path.join(root, 'conformance/run.py')),
    cmd: ['python3', 'conformance/run.py'],
    parse: parse.conformance,
  },
];

/** Stops the running step (and its process group) when this script is interrupted. */
let stopRunning = () => {};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopRunning();
    process.exit(130);
  });
}

/**
 * Runs a step in a process group of its own. The step ends when its process exits and its output
 * pipes close, or PIPE_GRACE_MS after the exit if something it left behind holds them; a step past
 * STEP_TIMEOUT_MS fails as timed out. Either way the group is killed, so nothing of it outlives it.
 */
function run(step) {
  const argv = typeof step.cmd === 'function' ? step.cmd() : step.cmd;
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(argv[0], argv.slice(1), {
      cwd: path.join(root, step.cwd ?? '.'),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ...step.env },
      detached: true,
    });
    let out = '';
    const keep = (chunk, sink) => {
      out += chunk;
      sink.write(chunk);
    };
    child.stdout.on('data', (c) => keep(c, process.stdout));
    child.stderr.on('data', (c) => keep(c, process.stderr));
    const killGroup = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    let finished = false;
    const finish = (ok, note) => {
      if (finished) return;
      finished = true;
      clearTimeout(stepTimer);
      clearTimeout(pipeTimer);
      killGroup();
      if (note) {
        out += `\n${note}\n`;
        process.stdout.write(`\n${note}\n`);
      }
      resolve({ ok, out, seconds: Math.round((Date.now() - started) / 100) / 10 });
    };
    stopRunning = () => finish(false, `${step.name}: interrupted`);
    const stepTimer = setTimeout(
      () => finish(false, `${step.name}: still running after ${STEP_TIMEOUT_MS / 60000} minutes, stopped`),
      STEP_TIMEOUT_MS,
    );
    let pipeTimer;
    child.on('error', (err) => {
      out += String(err);
      finish(false);
    });
    child.on('exit', (code) => {
      pipeTimer = setTimeout(
        () =>
          finish(code === 0, `${step.name}: exited ${code}, but a process it started still held its output`),
        PIPE_GRACE_MS,
      );
    });
    child.on('close', (code) => finish(code === 0));
  });
}

const results = [];
for (const step of steps) {
  if (only.size > 0 && !only.has(step.name)) continue;
  if (step.when && !step.when()) continue;
  process.stdout.write(`\n=== ${step.name} ===\n`);
  const result = await run(step);
  const counts = step.parse?.(result.out) ?? { passed: result.ok ? 1 : 0, failed: result.ok ? 0 : 1 };
  // A step that failed without any failing test (a crash, a lint error) still counts as a failure.
  if (!result.ok && counts.failed === 0) counts.failed = 1;
  results.push({ name: step.name, ok: result.ok, seconds: result.seconds, ...counts });
}

process.stdout.write('\n=== summary ===\n');
for (const r of results) {
  process.stdout.write(
    `${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(12)} ${String(r.passed).padStart(5)} passed ${String(r.failed).padStart(4)} failed  ${r.seconds}s\n`,
  );
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = results.every((r) => r.ok) && results.length > 0 ? 0 : 1;
