import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { topicSpecWithDefaults } from '@booblik/protocol';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, metadata, ok, until } from '../test-support/cluster-wire.js';
import { passConformanceThrough } from '../test-support/conformance-through.js';

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

  await passConformanceThrough(entry);

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
