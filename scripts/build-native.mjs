#!/usr/bin/env node
// Builds the optional native module of @booblik/protocol (batch CRC-32C over stored records) with the
// system C compiler and Node's own headers. Never fails the install: without a compiler or headers the
// TypeScript implementation is used instead, and the broker's startup line says which one runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'packages/protocol/native/booblik_native.c');
const out = path.join(root, 'packages/protocol/native/build/booblik_native.node');
const headers = [
  path.resolve(path.dirname(process.execPath), '..', 'include', 'node'),
  '/usr/include/node',
  '/usr/local/include/node',
].find((dir) => existsSync(path.join(dir, 'node_api.h')));

if (process.env.BOOBLIK_NATIVE === '0') process.exit(0);
if (existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) process.exit(0);
if (!headers) {
  console.warn('booblik: Node headers (node_api.h) not found; using the TypeScript CRC-32C only');
  process.exit(0);
}
mkdirSync(path.dirname(out), { recursive: true });
const cc = process.env.CC ?? 'cc';
const result = spawnSync(
  cc,
  ['-O3', '-std=c11', '-D_GNU_SOURCE', '-fPIC', '-shared', `-I${headers}`, '-o', out, source],
  {
    stdio: 'inherit',
  },
);
if (result.error || result.status !== 0) {
  console.warn(`booblik: could not build the native module with ${cc}; using the TypeScript CRC-32C only`);
} else {
  // Named, so that a run under several Nodes shows each built against its own headers.
  console.log(`booblik: native module built with the headers in ${headers}`);
}
