import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ReplicaFlag, type RouteV2 } from '@booblik/protocol';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, metadataV4, until } from '../test-support/cluster-wire.js';
import { isUp, ReplicatedTopic } from '../test-support/replicated-topic.js';
import { ReplicationOracle, seeded, withTimeout } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;
const LAG_MAX_MS = 1000;
/** A new replica of a small partition is added, copied and in sync well within this. */
const IN_SYNC_WITHIN_MS = 15_000;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);

/** Every partition of `topics` as `via` answers METADATA v4: its replicas, in sync or not. */
async function routesV2(via: KitBroker, topics: string[]): Promise<Record<string, RouteV2>> {
  const client = await connect(via.address);
  try {
    const md = await withTimeout(metadataV4(client, topics), 3000, `METADATA v4 via ${via.name}`);
    const routes: Record<string, RouteV2> = {};
    for (const name of topics) {
      const t = md.topics.find((x) => x.name === name);
      if (t === undefined || t.partitions.length === 0) throw new Error(`${name}: no partitions (yet)`);
      for (const p of t.partitions) routes[`${t.name}-${p.partition}`] = p.route;
    }
    return routes;
  } finally {
    client.close();
  }
}

const members = (r: RouteV2) => r.replicas.map((x) => x.member).sort();
const inSync = (r: RouteV2) =>
  r.replicas
    .filter((x) => (x.flags & ReplicaFlag.IN_SYNC) !== 0)
    .map((x) => x.member)
    .sort();

/** Waits until every partition of `topics`, as `via` answers, has `names` as replicas, all in sync. */
function untilReplicatedOn(via: KitBroker, topics: string[], names: string[], what: string) {
  const wanted = JSON.stringify([...names].sort());
  return until(
    () => routesV2(via, topics),
    (routes) =>
      Object.values(routes).every(
        (r) =>
          r.primary !== '' && JSON.stringify(members(r)) === wanted && JSON.stringify(inSync(r)) === wanted,
      ),
    what,
    IN_SYNC_WITHIN_MS,
  );
}

describe('replicas added to partitions short of their replication: brokers started one by one', () => {
  let kit: ClusterKit;
  const random = seeded(SEED);

  before(async () => {
    console.log(`replica growth tests: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices)`);
    kit = await startClusterKit({
      brokers: 3,
      leaseMs: LEASE_MS,
      flags: [`--replica.lag.max.millis=${LAG_MAX_MS}`],
      faultLinks: true,
      start: false,
    });
  });
  after(async () => {
    await kit?.cleanup();
  });

  function dumpLogs(): void {
    for (const b of kit.brokers) {
      const lines = (b.process?.lines ?? []).filter((l) => /primary|replica|allocator|epoch|sync/.test(l));
      console.log(`--- ${b.name} (${b.address})\n${lines.slice(-40).join('\n')}`);
    }
  }

  const running = () => kit.brokers.filter(isUp).map((b) => b.address);

  test('a partition created with one broker up gains a replica when a second starts, taking writes while it is copied', async () => {
    const [b1, b2] = kit.brokers as [KitBroker, KitBroker];
    await b1.start();
    const topic = new ReplicatedTopic(kit, 'grow-one', random);
    await topic.create(3);
    assert.deepEqual(members((await routesV2(b1, [topic.name]))['grow-one-0']!), ['b1']);
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(2);
    try {
      await oracle.acknowledgedMore(50, 30_000);
      // b1 cannot reach b2: b2 is added as a replica but cannot be copied to, so it stays out of sync.
      kit.peerLink(0, 1).blackhole();
      await b2.start();
      await until(
        () => routesV2(b1, [topic.name]),
        (routes) => JSON.stringify(members(routes['grow-one-0']!)) === '["b1","b2"]',
        'b2 added to the replicas',
        IN_SYNC_WITHIN_MS,
      );
      const refusedBefore = [...oracle.refusals].map(([what, n]) => `${what}: ${n}`);
      await oracle.acknowledgedMore(50, 10_000);
      assert.deepEqual(inSync((await routesV2(b1, [topic.name]))['grow-one-0']!), ['b1']);
      assert.deepEqual(
        [...oracle.refusals].map(([what, n]) => `${what}: ${n}`),
        refusedBefore,
        'writes refused while the new replica was being copied',
      );
      kit.peerLink(0, 1).heal();
      await untilReplicatedOn(b1, [topic.name], ['b1', 'b2'], 'b2 copied and in sync');
      await oracle.acknowledgedMore(50, 30_000);
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      kit.peerLink(0, 1).heal();
      await oracle.stop();
    }
    oracle.check(await topic.finalLog(1));
  });

  test('a partition created with two brokers up gains the third when it starts, and so does the default topic', async () => {
    const [b1, b2, b3] = kit.brokers as [KitBroker, KitBroker, KitBroker];
    for (const b of [b1, b2]) if (!isUp(b)) await b.start();
    const topic = new ReplicatedTopic(kit, 'grow-two', random);
    await topic.create(3);
    await untilReplicatedOn(b1, [topic.name], ['b1', 'b2'], 'two copies, both in sync, with two brokers up');
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(2);
    try {
      await oracle.acknowledgedMore(50, 30_000);
      await b3.start();
      // `default` was created when b1 started alone, with `replication` left to the cluster (the
      // default, 3, capped by the brokers up): it ends with three copies too.
      await untilReplicatedOn(b3, [topic.name, 'default'], ['b1', 'b2', 'b3'], 'three copies, all in sync');
      await oracle.acknowledgedMore(50, 30_000);
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

describe('replicas added: three brokers started at once, as `npm run cluster` does', () => {
  let kit: ClusterKit;

  before(async () => {
    kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS, start: false });
    await Promise.all(kit.brokers.map((b) => b.start()));
  });
  after(async () => {
    await kit?.cleanup();
  });

  test('the default topic ends with three copies, all in sync', async () => {
    await untilReplicatedOn(
      kit.brokers[0]!,
      ['default'],
      ['b1', 'b2', 'b3'],
      'default: three copies in sync',
    );
  });
});
