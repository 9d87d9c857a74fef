import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectEtcd, decodeOwner, Keyspace } from '@booblik/cluster';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { until } from '../test-support/cluster-wire.js';
import { isUp, ReplicatedTopic } from '../test-support/replicated-topic.js';
import { ReplicationOracle, seeded } from '../test-support/replication-oracle.js';

/** Long, so that waiting out the dead replica's lease cannot pass for a handover. */
const LEASE_MS = 4000;
const LAG_MAX_MS = 1000;
/** A handover takes one etcd transaction and a round trip; half a lease is far more than that. */
const HANDED_WITHIN_MS = LEASE_MS / 2;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);

describe('clean stop: three brokers, R=3, a real etcd', () => {
  let kit: ClusterKit;
  const random = seeded(SEED);

  before(async () => {
    console.log(`clean stop tests: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices)`);
    kit = await startClusterKit({
      brokers: 3,
      leaseMs: LEASE_MS,
      flags: [`--replica.lag.max.millis=${LAG_MAX_MS}`],
    });
  });
  after(async () => {
    await kit?.cleanup();
  });

  function dumpLogs(): void {
    for (const b of kit.brokers) {
      const lines = (b.process?.lines ?? []).filter((l) =>
        /primary|replica|allocator|epoch|sync|handed|lease/.test(l),
      );
      console.log(`--- ${b.name} (${b.address})\n${lines.slice(-40).join('\n')}`);
    }
  }

  /** The partition's in-sync set as etcd holds it, in the record's order (the primary first). */
  async function inSyncSet(topic: string): Promise<string[]> {
    const etcd = connectEtcd({ endpoints: [kit.etcd.endpoint] });
    try {
      const raw = await etcd.get(new Keyspace(kit.cluster).ownerKey(topic, 0)).buffer();
      assert.ok(raw !== null, `${topic}-0 has an owner record`);
      const owner = decodeOwner(raw);
      if ('problem' in owner) throw new Error(`${topic}-0's owner record: ${owner.problem}`);
      return [...owner.value.isr];
    } finally {
      etcd.close();
    }
  }

  test('SIGTERM of the primary just after a replica was SIGKILLed: the partition goes to the live replica at once, not to the dead one, and nothing acknowledged is lost', async (t) => {
    // minInSync 1, so the live replica alone takes writes once it leads: how soon is what is judged.
    const topic = new ReplicatedTopic(kit, 'dead-replica', random);
    await topic.create(3, { labels: { minInSync: '1' } });
    const running = () => kit.brokers.filter(isUp).map((b) => b.address);
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(3);
    oracle.startConsumer('c1');
    try {
      await oracle.acknowledgedMore(50, 30_000);
      const primary = await topic.primary(5000);
      // The first in-sync replica after the primary: the one a handover picks when it asks nobody.
      const isr = await inSyncSet(topic.name);
      const dead = kit.brokers.find((b) => b.name === isr.find((id) => id !== primary.name))!;
      const live = kit.brokers.find((b) => b !== primary && b !== dead)!;
      assert.ok(isr.includes(live.name), `all three in sync before the faults: ${isr.join(', ')}`);
      const signalledAt = performance.now();
      // Judged while the stopping broker still finishes its shutdown: from the signals on.
      const exited = Promise.all([dead.kill(), primary.stop()]);
      await until(
        () => topic.routeVia(live),
        (r) => r.primary === live.address,
        `${live.name}, the live replica, primary`,
        HANDED_WITHIN_MS,
      );
      const primaryAfterMs = performance.now() - signalledAt;
      const resumedMs = await oracle.firstAckAfter(signalledAt, HANDED_WITHIN_MS);
      t.diagnostic(
        `${live.name} primary within ${primaryAfterMs.toFixed(0)} ms of the signals; writes resumed after ${resumedMs.toFixed(0)} ms`,
      );
      await exited;
      assert.deepEqual(await inSyncSet(topic.name), [live.name], 'only the live replica in sync');
      await dead.start();
      await primary.start();
      await topic.untilEvery(
        kit.brokers,
        (r) => r.primary === live.address && r.replicas.length === 2,
        'both restarted brokers back in the in-sync set',
        30_000,
      );
      await oracle.acknowledgedMore(30, 30_000);
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      await oracle.stop();
    }
    oracle.check(await topic.finalLog());
    await topic.sameLogsEverywhere();
  });
});
