/**
 * The original clients' conformance checks (conformance/run.py) run through one broker of a cluster,
 * as a user of a v1 client would point it at any broker: the Python and TypeScript clients, the
 * contract's fourteen checks and the broker checks (ack NONE pipelining, a held fetch woken).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KitBroker, proxiedRequests } from './cluster-kit.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const CHECKS = [...Array.from({ length: 14 }, (_, i) => String(i + 1)), 'B1', 'B2', 'B3'];

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('python3', [path.join(repoRoot, 'conformance/run.py'), ...args], { cwd: repoRoot });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Runs the checks through `entry` and asserts they all pass, every request proxied by it. */
export async function passConformanceThrough(entry: KitBroker): Promise<void> {
  const before = await proxiedRequests(entry.httpPort);
  const { code, output } = await run([
    'python',
    'typescript',
    '--only',
    CHECKS.join(','),
    '--broker',
    entry.address,
  ]);
  assert.equal(code, 0, output);
  assert.match(output, /python: 14 passed, 0 failed/);
  assert.match(output, /typescript: 14 passed, 0 failed/);
  assert.ok((await proxiedRequests(entry.httpPort)) > before + 100, 'the requests went through the proxy');
}
