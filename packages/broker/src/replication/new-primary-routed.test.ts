import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeApplyResponse, topicSpecWithDefaults } from '@booblik/protocol';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, metadata, ok } from '../test-support/cluster-wire.js';

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
});
