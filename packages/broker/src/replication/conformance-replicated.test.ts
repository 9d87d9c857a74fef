import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { topicSpecWithDefaults } from '@booblik/protocol';
import {
  type ClusterKit,
  type KitBroker,
  proxiedRequests,
  startClusterKit,
} from '../test-support/cluster-kit.js';
import { connect, metadata, ok, until } from '../test-support/cluster-wire.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
/** The contract's fourteen checks and the broker checks (ack NONE pipelining, a held fetch woken). */
const CHECKS = [...Array.from({ length: 14 }, (_, i) => String(i + 1)), 'B1', 'B2', 'B3'];
const TOPICS = [
  { name: 'conformance', partitions: 3 },
  { name: 'single', partitions: 1 },
];
const LEASE_MS = 2000;

let kit: ClusterKit;
before(async () => {
  kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS });
});
after(async () => {
  await kit?.cleanup();
});

/** Every partition's route as `via` answers it. */
async function routes(via: KitBroker) {
  const client = await connect(via.address);
  try {
    const md = await metadata(
      client,
      TOPICS.map((t) => t.name),
    );
    return md.topics.flatMap((t) =>
      t.partitions.map((p) => ({ name: `${t.name}-${p.partition}`, ...p.route })),
    );
  } finally {
    client.close();
  }
}

/** Waits until every running broker routes every partition to a primary with both replicas in sync. */
async function untilWhole(what: string, check: (r: { primary: string }) => boolean = () => true) {
  await until(
    () => Promise.all(kit.brokers.map(routes)),
    (views) => views.every((rs) => rs.every((r) => r.primary !== '' && r.replicas.length === 2 && check(r))),
    what,
    30_000,
  );
}

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

/** A partition's segment bytes on a broker's disk, as their length and digest (short in a failure). */
function logDigest(b: KitBroker, partition: string): string {
  const dir = path.join(b.dataDir, partition);
  const bytes = Buffer.concat(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort()
      .map((f) => fs.readFileSync(path.join(dir, f))),
  );
  return `${bytes.length} B ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

test('the Python and TypeScript clients pass their 14 checks against a replicated cluster (R=3) through a broker that is primary of nothing', async () => {
  const client = await connect(kit.brokers[0]!.address);
  try {
    ok(
      await client.apply(
        TOPICS.map((t) => ({
          op: 'upsert' as const,
          spec: { ...topicSpecWithDefaults({ ...t, revision: 0 }), replication: 3 },
        })),
      ),
      'APPLY the conformance topics with replication 3',
    );
  } finally {
    client.close();
  }
  await untilWhole('every conformance partition on three brokers, all in sync');
  // The entry broker fails over every partition it was primary of, and comes back as a replica of all.
  const entry = kit.brokers[2]!;
  await entry.kill();
  await entry.start();
  await untilWhole(
    `every partition's primary elsewhere, ${entry.name} back in every in-sync set`,
    (r) => r.primary !== entry.address,
  );

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

  // What the clients wrote is on all three, byte for byte.
  const partitions = (await routes(entry)).map((r) => r.name);
  await until(
    async () => partitions.map((p) => Object.fromEntries(kit.brokers.map((b) => [b.name, logDigest(b, p)]))),
    (logs) => logs.every((copies) => new Set(Object.values(copies)).size === 1),
    'every replica of every conformance partition identical',
    20_000,
  );
  assert.ok(
    partitions.some((p) => !logDigest(entry, p).startsWith('0 B')),
    'the clients wrote records to the replicated partitions',
  );
});
