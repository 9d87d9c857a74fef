import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { ReplicatedTopic } from '../test-support/replicated-topic.js';
import { ReplicationOracle, seeded } from '../test-support/replication-oracle.js';

/** Well under the 10 s a graceful stop may take before it closes sockets anyway (limits.ts). */
const STOPPED_WITHIN_MS = 5000;

describe('three brokers sent SIGTERM at once', () => {
  let kit: ClusterKit;

  before(async () => {
    kit = await startClusterKit({ brokers: 3, leaseMs: 2000 });
  });
  after(async () => {
    await kit?.cleanup();
  });

  test('under load, every broker stops cleanly well within the grace period, none waiting on another', async () => {
    const topic = new ReplicatedTopic(kit, 'together', seeded(1));
    await topic.create(3);
    await topic.primary(10_000);
    const oracle = new ReplicationOracle(topic.name, 0, () => kit.brokers.map((b) => b.address), seeded(2));
    oracle.startProducers(4);
    oracle.startConsumer('c1');
    // Broker-to-broker connections held open on every side: replication, and a replica's reads.
    oracle.startPinnedConsumer('p3', () => kit.brokers[2]!.address);
    try {
      await oracle.acknowledgedMore(200, 30_000);
      const started = performance.now();
      const stops = kit.brokers.map(async (b) => {
        const process = b.process!;
        await b.stop();
        return { name: b.name, ms: performance.now() - started, code: process.proc.exitCode };
      });
      const stopped = await Promise.all(stops);
      for (const s of stopped) {
        assert.equal(s.code, 0, `${s.name} exited ${s.code}`);
        assert.ok(s.ms < STOPPED_WITHIN_MS, `${s.name} took ${s.ms.toFixed(0)} ms to stop`);
      }
    } finally {
      await oracle.stop();
    }
  });
});
