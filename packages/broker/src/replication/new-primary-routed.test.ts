import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeApplyResponse, topicSpecWithDefaults } from '@booblik/protocol';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, metadata, ok, untilListed } from '../test-support/cluster-wire.js';
import { ReplicatedTopic } from '../test-support/replicated-topic.js';
import { seeded } from '../test-support/replication-oracle.js';

/** A primary's lease lapses within its TTL and etcd's expiry tick; the allocator then promotes. */
const PROMOTED_WITHIN_MS = 2000 + 5000;

/** APPLY waits at most this long for a new partition's primary: a wait this long means it never saw it. */
const APPLY_ASSIGNED_WAIT_MS = 5000;

describe('replication: new R=3 topics in a three-broker cluster', () => {
  let kit: ClusterKit;

  before(async () => {
    kit = await startClusterKit({ brokers: 3, leaseMs: 2000 });
  });
  after(async () => {
    await kit?.cleanup();
  });

  test('every broker routes each to its primary at once, the primary too, and APPLY does not wait out its bound', async () => {
    // The allocator spreads primaries: three topics created through one broker put one on it, whose
    // APPLY then waits, on that broker, for its own partition to be served.
    for (let i = 0; i < 6; i++) {
      const via = kit.brokers[Math.floor(i / 3) % kit.brokers.length]!;
      const name = `fresh${i}`;
      const client = await connect(via.address);
      const started = performance.now();
      const { revision } = decodeApplyResponse(
        ok(
          await client.apply([
            {
              op: 'upsert',
              spec: { ...topicSpecWithDefaults({ name, partitions: 1, revision: 0 }), replication: 3 },
            },
          ]),
          `APPLY ${name}`,
        ),
      );
      const applyMs = performance.now() - started;
      client.close();
      const routes: string[] = [];
      for (const b of kit.brokers) {
        const c = await connect(b.address);
        routes.push((await metadata(c, [name], revision)).topics[0]!.partitions[0]!.route.primary);
        c.close();
      }
      assert.ok(
        routes.every((r) => r !== '' && r === routes[0]),
        `${name} (through ${via.name}): primaries as b1, b2, b3 answer: ${JSON.stringify(routes)}`,
      );
      assert.ok(
        applyMs < APPLY_ASSIGNED_WAIT_MS - 1000,
        `APPLY of ${name} through ${via.name} took ${applyMs.toFixed(0)} ms: it did not see the partition served`,
      );
    }
  });
  test('a LIST watch on every broker, the new primary included, fires once a promoted primary is routable after a failover', async () => {
    const topic = new ReplicatedTopic(kit, 'watched-failover', seeded(1));
    await topic.create(3);
    const old = await topic.primary(10_000);
    const survivors = kit.brokers.filter((b) => b !== old);
    const watchers = await Promise.all(survivors.map((b) => connect(b.address)));
    const routedOnEach = watchers.map((client, i) =>
      untilListed(
        client,
        (l) => {
          const primary = l.topics.find((t) => t.spec.name === topic.name)?.routes[0]?.primary ?? '';
          return primary !== '' && primary !== old.address;
        },
        `the LIST watch on ${survivors[i]!.name} shows the new primary`,
        PROMOTED_WITHIN_MS,
      ),
    );
    try {
      await old.kill();
      // Only the watch: no LIST is asked again, so a route that changes without a revision must fire it.
      await Promise.all(routedOnEach);
    } finally {
      for (const c of watchers) c.close();
      await old.start();
    }
  });
});
