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

export const VERSITYGW_MODULE = 'github.com/versity/versitygw/cmd/versitygw';
export const VERSITYGW_VERSION = 'v1.8.0';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binDir = path.join(root, '.cache', 'bin');
const binary = path.join(binDir, 'versitygw');

if (fs.existsSync(binary)) {
  console.log(`versitygw ${VERSITYGW_VERSION}: ${path.relative(root, binary)} is built already`);
  process.exit(0);
}

// Built into a folder of its own and renamed into place, so an interrupted build leaves no binary
// that looks whole.
fs.mkdirSync(binDir, { recursive: true });
const staging = fs.mkdtempSync(path.join(binDir, '.install-'));
const started = Date.now();
console.log(`versitygw ${VERSITYGW_VERSION}: go install ${VERSITYGW_MODULE} (once; a few minutes)`);
const go = spawn('go', ['install', '-ldflags=-s -w', `${VERSITYGW_MODULE}@${VERSITYGW_VERSION}`], {
  env: { ...process.env, GOBIN: staging },
  stdio: ['ignore', 'inherit', 'inherit'],
});
go.on('error', (error) => {
  console.error(`versitygw: cannot run go (${error.message}); the S3 store tests need it`);
  fs.rmSync(staging, { recursive: true, force: true });
  process.exit(1);
});
go.on('exit', (code, signal) => {
  if (code === 0) fs.renameSync(path.join(staging, 'versitygw'), binary);
  fs.rmSync(staging, { recursive: true, force: true });
  if (code !== 0) {
    console.error(`versitygw: go install failed (${signal ?? `exit ${code}`})`);
    process.exit(1);
  }
  console.log(
    `versitygw: built ${path.relative(root, binary)} in ${Math.round((Date.now() - started) / 1000)} s`,
  );
});
