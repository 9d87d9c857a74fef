#!/usr/bin/env node
// The suite on every supported Node.js release pinned in scripts/node-versions.json, and the refusal
// of the older ones: `npm run test:versions`. Each release is fetched with npm (scripts/node-fetch.mjs)
// and runs in a copy of this working tree of its own, .cache/versions/<version>/, with that Node first
// on the PATH and its own node_modules installed by it (`npm ci`, which builds the native module with
// that Node's headers), so no release disturbs another's install or this tree's. Per release: the
// install, the native module and the optional @node-rs/crc32 loaded by that Node, then `npm test --
// lint build ts` (the TypeScript tests include the cluster, store, reliability and `npm start` tests;
// the reliability checks at a smaller size) and the conformance kit with the TypeScript client.
// Each refused release must get one line and exit code 2 from every entry point
// (scripts/node-refusal.test.mjs). The last line is the total: "N passed, M failed".
//
//   npm run test:versions                      every pinned release
//   npm run test:versions -- 22 26             only these majors (supported or refused)
//   npm run test:versions -- --except-running  not the release that is running this (CI: npm test ran it)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureNode, pins, root } from './node-fetch.mjs';
import { syncTree } from './tree-copy.mjs';

const args = process.argv.slice(2);
const exceptRunning = args.includes('--except-running');
const majors = args.filter((a) => !a.startsWith('--'));
const wanted = (group) =>
  Object.entries(pins[group])
    .filter(([major]) => majors.length === 0 || majors.includes(major))
    .map(([, pin]) => pin);

/** The environment of a run under another Node: that Node first on the PATH, no outer npm's settings. */
function envFor(binary) {
  const env = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (/^npm_/i.test(key) || key === 'INIT_CWD') delete env[key];
  env.PATH = `${path.dirname(binary)}${path.delimiter}${env.PATH ?? ''}`;
  return env;
}

/** After a command exits, how long its output pipes may stay open (held by a process it left behind). */
const PIPE_GRACE_MS = 10 * 1000;

/**
 * Runs a command with its output streamed; resolves with its exit code, output and seconds once it
 * exited and its pipes closed, or PIPE_GRACE_MS after its exit if something it started holds them.
 */
function run(argv, options) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(argv[0], argv.slice(1), { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (sink) => (chunk) => {
      out += chunk;
      sink.write(chunk);
    };
    child.stdout.on('data', keep(process.stdout));
    child.stderr.on('data', keep(process.stderr));
    const done = (code) => {
      clearTimeout(grace);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ code, out, seconds: Math.round((Date.now() - started) / 1000) });
    };
    let grace;
    child.on('error', (error) => resolve({ code: -1, out: String(error), seconds: 0 }));
    child.on('exit', (code) => {
      grace = setTimeout(() => done(code), PIPE_GRACE_MS);
    });
    child.on('close', (code) => done(code));
  });
}

/** The last "N passed, M failed" of a run's output, or null when it has none. */
function counts(out) {
  const all = [...out.matchAll(/^(\d+) passed, (\d+) failed$/gm)];
  const last = all.at(-1);
  return last ? { passed: Number(last[1]), failed: Number(last[2]) } : null;
}

// Loads the native module and @node-rs/crc32 by path, as @booblik/protocol does, and checks both on
// the CRC-32C check value; prints the ABI so the log says which Node built and loaded them.
const LOAD_CHECK = `
const { createRequire } = require('node:module');
const req = createRequire(process.cwd() + '/packages/protocol/package.json');
const check = Buffer.from('123456789');
const native = req('./native/build/booblik_native.node');
if (native.crc32c(check, 0, check.length) !== 0xe3069283) throw new Error('native module: wrong CRC-32C');
if (req('@node-rs/crc32').crc32c(check) !== 0xe3069283) throw new Error('@node-rs/crc32: wrong CRC-32C');
console.log('native module (' + native.crcKind + ') and @node-rs/crc32 load on Node ' + process.version +
  ' (ABI ' + process.versions.modules + ', Node-API ' + process.versions.napi + ')');
`;

/**
 * Each reliability check once per release, at a third or less of npm test's size (test/src/kit/budget.ts),
 * so that the runs on every release fit CI's time: crash rounds, fuzzed cases, probes under overload
 * (still against 10,000 idle connections and 1,000 held fetches), acknowledgements before a power
 * cut, segments removed under load, fill-and-free cycles.
 */
const RELIABILITY_PER_RELEASE = {
  BOOBLIK_RELIABILITY_CRASH_ROUNDS: '6',
  BOOBLIK_RELIABILITY_FUZZ_CASES: '3000',
  BOOBLIK_RELIABILITY_OVERLOAD_PROBES: '100',
  BOOBLIK_RELIABILITY_POWER_CUT_ACKS: '100',
  BOOBLIK_RELIABILITY_RETENTION_REMOVALS: '100',
  BOOBLIK_RELIABILITY_FULL_DISK_CYCLES: '1',
};

/** The suite's steps on one supported release, in its own copy of the tree. */
async function supported(pin) {
  const result = { version: pin.version, steps: [], passed: 0, failed: 0 };
  const step = (name, ok, seconds, c) => {
    const n = c ?? { passed: ok ? 1 : 0, failed: ok ? 0 : 1 };
    if (!ok && n.failed === 0) n.failed = 1; // a step that failed without a failing test still failed
    result.steps.push({ name, ok, seconds, ...n });
    result.passed += n.passed;
    result.failed += n.failed;
    return ok;
  };
  process.stdout.write(`\n##### Node.js ${pin.version} #####\n`);
  let binary;
  const t0 = Date.now();
  try {
    binary = ensureNode(pin.version);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    step('fetch', false, 0);
    return result;
  }
  step('fetch', true, Math.round((Date.now() - t0) / 1000));
  const tree = path.join(root, '.cache', 'versions', pin.version);
  syncTree(root, tree);
  const options = { cwd: tree, env: envFor(binary) };
  const install = await run([binary, 'scripts/ensure-installed.mjs'], options);
  if (!step('install', install.code === 0, install.seconds)) return result;
  // Built again here by this Node, whatever an earlier run left: the headers must be this release's.
  fs.rmSync(path.join(tree, 'packages/protocol/native/build'), { recursive: true, force: true });
  const build = await run([binary, 'scripts/build-native.mjs'], options);
  const headers = path.join(path.dirname(path.dirname(binary)), 'include', 'node');
  const loaded = build.code === 0 ? await run([binary, '-e', LOAD_CHECK], options) : build;
  const native = build.code === 0 && build.out.includes(headers) && loaded.code === 0;
  if (build.code === 0 && !build.out.includes(headers)) process.stderr.write(`not built with ${headers}\n`);
  step('native', native, build.seconds + loaded.seconds);
  const suite = await run(['npm', 'test', '--', 'lint', 'build', 'ts'], {
    ...options,
    env: { ...options.env, ...RELIABILITY_PER_RELEASE },
  });
  step('suite', suite.code === 0, suite.seconds, counts(suite.out));
  // The TypeScript client and the broker are what run on this Node; the Python and Go clients'
  // conformance does not depend on it, and npm test checks them on the machine's Node.
  const conformance = await run(['python3', 'conformance/run.py', 'typescript'], options);
  step('conformance', conformance.code === 0, conformance.seconds, counts(conformance.out));
  return result;
}

/** The refusal checks against one release older than every supported one. */
async function refused(pin) {
  const result = { version: pin.version, steps: [], passed: 0, failed: 0 };
  process.stdout.write(`\n##### Node.js ${pin.version} (refused) #####\n`);
  let binary;
  try {
    binary = ensureNode(pin.version);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    result.steps.push({ name: 'fetch', ok: false, seconds: 0, passed: 0, failed: 1 });
    result.failed = 1;
    return result;
  }
  const test = path.join(root, 'scripts', 'node-refusal.test.mjs');
  const r = await run([process.execPath, '--test', '--test-reporter=spec', test], {
    cwd: root,
    env: { ...process.env, BOOBLIK_REFUSED_NODE: binary },
  });
  const pass = /^(?:#|ℹ) pass (\d+)/m.exec(r.out);
  const fail = /^(?:#|ℹ) fail (\d+)/m.exec(r.out);
  const n = { passed: Number(pass?.[1] ?? 0), failed: Number(fail?.[1] ?? 0) };
  if (r.code !== 0 && n.failed === 0) n.failed = 1;
  result.steps.push({ name: 'refusal', ok: r.code === 0, seconds: r.seconds, ...n });
  Object.assign(result, n);
  return result;
}

const results = [];
for (const pin of wanted('supported')) {
  if (exceptRunning && `v${pin.version}` === process.version) {
    results.push({ version: pin.version, skipped: 'the running Node (npm test ran on it)' });
    continue;
  }
  results.push(await supported(pin));
}
for (const pin of wanted('refused')) results.push(await refused(pin));

process.stdout.write('\n=== node versions ===\n');
for (const r of results) {
  if (r.skipped) {
    process.stdout.write(`skip ${r.version.padEnd(8)} ${r.skipped}\n`);
    continue;
  }
  const steps = r.steps.map((s) => `${s.ok ? '' : 'FAILED '}${s.name} ${s.seconds}s`).join(', ');
  const ok = r.failed === 0 && r.steps.every((s) => s.ok);
  process.stdout.write(
    `${ok ? 'ok  ' : 'FAIL'} ${r.version.padEnd(8)} ${String(r.passed).padStart(5)} passed ${String(r.failed).padStart(4)} failed  ${steps}\n`,
  );
}
const ran = results.filter((r) => !r.skipped);
const passed = ran.reduce((n, r) => n + r.passed, 0);
const failed = ran.reduce((n, r) => n + r.failed, 0);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = ran.length > 0 && ran.every((r) => r.failed === 0 && r.steps.every((s) => s.ok)) ? 0 : 1;
