import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ClusterKit, proxiedRequests, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, primaries } from '../test-support/cluster-wire.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
/** The contract's fourteen checks and the broker checks (ack NONE pipelining, a held fetch woken). */
const CHECKS = [...Array.from({ length: 14 }, (_, i) => String(i + 1)), 'B1', 'B2', 'B3'];

let kit: ClusterKit;
before(async () => {
  kit = await startClusterKit({ brokers: 2, start: false });
  const [proxying, primary] = kit.brokers as [
    NonNullable<ClusterKit['brokers'][0]>,
    NonNullable<ClusterKit['brokers'][1]>,
  ];
  // The primary alone creates the conformance topics, so it owns every partition of them.
  await primary.start(['--topics=conformance:3,single:1']);
  await proxying.start(['--topics=conformance:3,single:1']);
});
after(async () => {
  await kit?.cleanup();
});

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

test('the Python and TypeScript clients pass their 14 checks through a broker that proxies every partition', async () => {
  const [proxying, primary] = kit.brokers as [
    NonNullable<ClusterKit['brokers'][0]>,
    NonNullable<ClusterKit['brokers'][1]>,
  ];
  const client = await connect(proxying.address);
  for (const topic of ['conformance', 'single']) {
    assert.ok(
      (await primaries(client, topic)).every((r) => r === primary.address),
      `${topic} served by the other broker only`,
    );
  }
  client.close();
  const before = await proxiedRequests(proxying.httpPort);
  const { code, output } = await run([
    'python',
    'typescript',
    '--only',
    CHECKS.join(','),
    '--broker',
    proxying.address,
  ]);
  assert.equal(code, 0, output);
  assert.match(output, /python: 14 passed, 0 failed/);
  assert.match(output, /typescript: 14 passed, 0 failed/);
  assert.ok((await proxiedRequests(proxying.httpPort)) > before + 100, 'the requests went through the proxy');
});
