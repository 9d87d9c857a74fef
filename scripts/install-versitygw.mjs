#!/usr/bin/env node
// Builds Versity's S3 gateway (versitygw), the real S3-compatible server the store tests run
// against, into .cache/bin/ (git-ignored) unless it is there already. The first build fetches its
// modules from the Go module proxy and compiles them: a few minutes on a 2-core machine; every later
// run reuses the binary. `.ci/run` calls this before `npm test`; the test kit calls it when the
// binary is missing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSITYGW_MODULE = 'github.com/versity/versitygw/cmd/versitygw';
const VERSITYGW_VERSION = 'v1.8.0';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binDir = path.join(root, '.cache', 'bin');
const binary = path.join(binDir, 'versitygw');

/** How long a second installer waits for a first one (in another test process) to finish. */
const WAIT_FOR_OTHER_MS = 20 * 60_000;

if (fs.existsSync(binary)) {
  console.log(`versitygw ${VERSITYGW_VERSION}: ${path.relative(root, binary)} is built already`);
  process.exit(0);
}

// One build at a time (test files run in parallel processes): the lock is a folder holding the
// builder's pid; a lock whose builder is gone is taken over.
fs.mkdirSync(binDir, { recursive: true });
const lock = path.join(binDir, '.install.lock');
const waitStarted = Date.now();
while (!takeLock()) {
  if (Date.now() - waitStarted > WAIT_FOR_OTHER_MS) {
    console.error(`versitygw: another build still holds ${lock} after ${WAIT_FOR_OTHER_MS / 60_000} min`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  if (fs.existsSync(binary)) {
    console.log(`versitygw ${VERSITYGW_VERSION}: built by another process`);
    process.exit(0);
  }
}

function takeLock() {
  try {
    fs.mkdirSync(lock);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    const holder = Number(fs.readFileSync(path.join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
    if (holder > 0 && isAlive(holder)) return false;
    if (holder === 0 && Date.now() - fs.statSync(lock).mtimeMs < 10_000) return false; // pid not written yet
    fs.rmSync(lock, { recursive: true, force: true });
    return takeLock();
  }
  fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
  return true;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// Built into a folder of its own and renamed into place, so an interrupted build leaves no binary
// that looks whole.
const staging = fs.mkdtempSync(path.join(binDir, '.install-'));
const started = Date.now();
const done = (code) => {
  fs.rmSync(staging, { recursive: true, force: true });
  fs.rmSync(lock, { recursive: true, force: true });
  process.exit(code);
};
console.log(`versitygw ${VERSITYGW_VERSION}: go install ${VERSITYGW_MODULE} (once; a few minutes)`);
const go = spawn('go', ['install', '-ldflags=-s -w', `${VERSITYGW_MODULE}@${VERSITYGW_VERSION}`], {
  env: { ...process.env, GOBIN: staging },
  stdio: ['ignore', 'inherit', 'inherit'],
});
go.on('error', (error) => {
  console.error(`versitygw: cannot run go (${error.message}); the S3 store tests need it`);
  done(1);
});
go.on('exit', (code, signal) => {
  if (code !== 0) {
    console.error(`versitygw: go install failed (${signal ?? `exit ${code}`})`);
    return done(1);
  }
  fs.renameSync(path.join(staging, 'versitygw'), binary);
  console.log(
    `versitygw: built ${path.relative(root, binary)} in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  done(0);
});
