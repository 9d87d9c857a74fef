import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectEtcd, Keyspace } from '@booblik/cluster';
import { AckPolicy, ErrorCode, encodeProduceRequest } from '@booblik/protocol';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, until } from '../test-support/cluster-wire.js';
import type { RawClient } from '../test-support/raw-client.js';
import { isUp, ReplicatedTopic } from '../test-support/replicated-topic.js';
import { ReplicationOracle, seeded, withTimeout } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;
const LAG_MAX_MS = 1000;
/** A lease lapses at etcd within its TTL and etcd's 500 ms expiry tick; the allocator then promotes. */
const PROMOTED_WITHIN_MS = LEASE_MS + 5000;
/** A primary stops routing to itself as soon as it steps down; a second covers a loaded machine. */
const LEASE_LAPSE_SEEN_MS = 1000;
/** The slow replica's link: every byte each way this late, well past the lag bound. */
const SLOW_MS = 3 * LAG_MAX_MS;
/** How long the primary stays cut from its replicas after they left the in-sync set. */
const HELD_CUT_MS = 2 * LAG_MAX_MS;
/** A slowed etcd link, each way: a change of the in-sync set takes a few of these, a lease many. */
const ETCD_SLOW_MS = 150;
/** A link slow each way, but whose round trip stays far below the lag bound. */
const IDLE_LINK_MS = 150;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);

describe('replication over cut links: three brokers, R=3, every link through a fault proxy', () => {
  let kit: ClusterKit;
  const random = seeded(SEED);

  before(async () => {
    console.log(`replication link tests: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices)`);
    kit = await startClusterKit({
      brokers: 3,
      leaseMs: LEASE_MS,
      faultLinks: true,
      flags: [`--replica.lag.max.millis=${LAG_MAX_MS}`],
    });
  });
  after(async () => {
    await kit?.cleanup();
  });

  /** The running brokers in a seeded order: a client asks any of them first, the cut-off one too. */
  const running = () =>
    kit.brokers
      .filter(isUp)
      .map((b) => ({ address: b.address, order: random() }))
      .sort((a, b) => a.order - b.order)
      .map((b) => b.address);

  /** Every link back to pass: a failed test leaves the next one a whole cluster. */
  function healAll(): void {
    for (let i = 0; i < kit.brokers.length; i++) {
      kit.etcdLink(i).heal();
      for (let j = 0; j < kit.brokers.length; j++) if (i !== j) kit.peerLink(i, j).heal();
    }
  }

  /** What the brokers said about roles, leases and replicas, for a failure's report. */
  function dumpLogs(): void {
    for (const b of kit.brokers) {
      const lines = (b.process?.lines ?? []).filter((l) =>
        /primary|replica|allocator|epoch|sync|diverged|lease|etcd/.test(l),
      );
      console.log(`--- ${b.name} (${b.address})\n${lines.slice(-40).join('\n')}`);
    }
  }

  /** Sends one WRITTEN PRODUCE; resolves with its error code, or 'closed' if no answer came. */
  async function sendProduce(client: RawClient, topic: string, record: string) {
    const id = client.id();
    client.send(
      encodeProduceRequest(id, {
        topic,
        partition: 0,
        ack: AckPolicy.WRITTEN,
        records: [Buffer.from(record)],
      }),
    );
    return client.expect(id).then(
      (frame) => frame.errorCode,
      () => 'closed' as const,
    );
  }

  test('the primary cut from etcd alone serves on until a replica tells it of the later epoch, then steps down and refuses writes; every acknowledgement it gave is kept; after heal it rejoins as a replica and catches up', async (t) => {
    const topic = new ReplicatedTopic(kit, 'etcd-cut', random);
    await topic.create();
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(4);
    oracle.startConsumer('c1');
    try {
      await oracle.acknowledgedMore(50, 30_000);
      const old = await topic.primary(5000);
      const others = kit.brokers.filter((b) => b !== old);
      // When etcd expires the old primary's lease (its member key goes with it), seen from outside.
      const etcd = connectEtcd({ endpoints: [kit.etcd.endpoint] });
      const memberKey = new Keyspace(kit.cluster).memberKey(old.name);
      const watcher = await etcd.watch().key(memberKey).create();
      let expiredAt: number | undefined;
      watcher.once('delete', () => {
        expiredAt = performance.now();
      });
      kit.etcdLink(topic.indexOf(old)).blackhole();
      const cutAt = performance.now();
      try {
        await until(
          async () => expiredAt,
          (at) => at !== undefined,
          "etcd expired the old primary's lease",
          PROMOTED_WITHIN_MS,
        );
      } finally {
        await watcher.cancel();
        etcd.close();
      }
      await topic.untilEvery(
        others,
        (r) => r.primary !== '' && r.primary !== old.address,
        'another in-sync replica promoted, as both others see it',
        PROMOTED_WITHIN_MS,
      );
      await until(
        async () => oracle.acknowledged.some((a) => a.via !== old.address && a.sentAt > cutAt),
        (resumed) => resumed,
        'writes resumed through the new primary',
        10_000,
      );
      // Its copy of etcd is stale, but the replicas refuse its groups (a later epoch): it steps down,
      // names itself primary to nobody, and refuses a PRODUCE at once with nothing written.
      await until(
        () => topic.routeVia(old),
        (r) => r.primary !== old.address,
        'the old primary no longer names itself primary once a replica refused it',
        LEASE_LAPSE_SEEN_MS + LEASE_MS,
      );
      const fenced = await connect(old.address);
      try {
        assert.equal(
          await withTimeout(
            sendProduce(fenced, topic.name, 'fenced'),
            LEASE_LAPSE_SEEN_MS,
            'PRODUCE to the old primary',
          ),
          ErrorCode.NO_PRIMARY,
          'a PRODUCE to the primary that stepped down',
        );
      } finally {
        fenced.close();
      }
      await oracle.acknowledgedMore(30, 30_000);
      const byOld = oracle.acknowledged.filter((a) => a.via === old.address && a.sentAt > cutAt);
      const lastByOld = Math.max(cutAt, ...byOld.map((a) => a.at));
      t.diagnostic(
        `after the cut: the old primary acknowledged ${byOld.length} more, the last +${(lastByOld - cutAt).toFixed(0)} ms; lease expired at etcd +${(expiredAt! - cutAt).toFixed(0)} ms`,
      );

      kit.etcdLink(topic.indexOf(old)).heal();
      await topic.untilEvery(
        kit.brokers,
        (r) => r.primary !== old.address && r.replicas.length === 2 && r.replicas.includes(old.address),
        'the old primary back in the in-sync set as a replica',
        30_000,
      );
      await oracle.acknowledgedMore(30, 30_000);
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      healAll();
      await oracle.stop();
    }
    // Every acknowledgement, the old primary's after the cut too, is in the new primary's log.
    const log = await topic.finalLog();
    oracle.check(log);
    assert.ok(!log.includes('fenced'), 'the PRODUCE refused by the old primary was not written');
    await topic.sameLogsEverywhere();
  });

  test('the primary cut from both replicas (etcd fine): nothing commits, the in-sync set shrinks to the primary, PRODUCE is refused NOT_ENOUGH_REPLICAS; after heal the replicas catch up and writes resume', async () => {
    const topic = new ReplicatedTopic(kit, 'peer-cut', random);
    await topic.create();
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(4);
    oracle.startConsumer('c1');
    try {
      await oracle.acknowledgedMore(50, 30_000);
      const primary = await topic.primary(5000);
      const p = topic.indexOf(primary);
      const replicas = kit.brokers.filter((b) => b !== primary);
      for (const r of replicas) kit.peerLink(p, topic.indexOf(r)).cut();
      const cutAt = performance.now();
      const shrunkMs = await until(
        () => topic.routeVia(primary),
        (r) => r.primary === primary.address && r.replicas.length === 0,
        'the in-sync set shrunk to the primary alone',
        LAG_MAX_MS + 5000,
      );
      assert.ok(
        shrunkMs >= LAG_MAX_MS * 0.9,
        `replicas left the set ${shrunkMs.toFixed(0)} ms after the cut`,
      );
      // Held cut: every PRODUCE is refused, at once, and the set stays shrunk (no replica rejoins
      // without having caught up).
      const client = await connect(primary.address);
      const heldFrom = performance.now();
      let refused = 0;
      try {
        while (performance.now() - heldFrom < HELD_CUT_MS) {
          assert.equal(
            await withTimeout(
              sendProduce(client, topic.name, `short-${refused}`),
              1000,
              'PRODUCE below minInSync',
            ),
            ErrorCode.NOT_ENOUGH_REPLICAS,
            'a PRODUCE with one of three in sync',
          );
          refused++;
          const r = await topic.routeVia(primary);
          assert.deepEqual(r.replicas, [], 'in sync while cut off from the primary');
        }
      } finally {
        client.close();
      }
      assert.ok(refused > 0);
      assert.ok(
        (oracle.refusals.get(`code ${ErrorCode.NOT_ENOUGH_REPLICAS}`) ?? 0) > 0,
        'producers were refused',
      );
      assert.deepEqual(
        oracle.acknowledged.filter((a) => a.sentAt > cutAt).map((a) => `${a.payload}@${a.offset}`),
        [],
        'acknowledged with no replica reachable',
      );
      const stillPrimary = await topic.routeVia(replicas[0]!);
      assert.equal(stillPrimary.primary, primary.address, 'no failover: the primary holds its lease');

      for (const r of replicas) kit.peerLink(p, topic.indexOf(r)).heal();
      await topic.untilEvery(
        kit.brokers,
        (r) => r.primary === primary.address && r.replicas.length === 2,
        'both replicas caught up and back in the in-sync set',
        20_000,
      );
      await oracle.acknowledgedMore(50, 30_000);
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      healAll();
      await oracle.stop();
    }
    oracle.check(await topic.finalLog());
    await topic.sameLogsEverywhere();
  });

  test('a replica slowed past the lag bound leaves the in-sync set, writes go on without waiting for it, and once the delay is lifted it catches up and rejoins', async (t) => {
    const topic = new ReplicatedTopic(kit, 'slow', random);
    await topic.create();
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(4);
    oracle.startConsumer('c1');
    try {
      const baselineMs = await oracle.acknowledgedMore(100, 30_000);
      const primary = await topic.primary(5000);
      const slow = kit.brokers.find((b) => b !== primary)!;
      const link = kit.peerLink(topic.indexOf(primary), topic.indexOf(slow));
      link.delay(SLOW_MS);
      await until(
        () => topic.routeVia(primary),
        (r) => r.replicas.length === 1 && !r.replicas.includes(slow.address),
        'the slow replica out of the in-sync set',
        LAG_MAX_MS + 2 * SLOW_MS + 5000,
      );
      const leftAt = performance.now();
      const refusedBefore = [...oracle.refusals].map(([what, n]) => `${what}: ${n}`);
      // Had the primary waited for the slow replica, each acknowledgement would take two delays.
      const slowPhaseMs = await oracle.acknowledgedMore(100, SLOW_MS);
      const waited = oracle.acknowledged.filter((a) => a.sentAt > leftAt && a.at - a.sentAt >= SLOW_MS);
      assert.deepEqual(
        waited.map((a) => `${a.payload} ${(a.at - a.sentAt).toFixed(0)} ms`),
        [],
        'acknowledgements waited for a replica out of the in-sync set',
      );
      t.diagnostic(
        `100 acknowledgements in ${baselineMs.toFixed(0)} ms with all three in sync, ${slowPhaseMs.toFixed(0)} ms with the slow one out`,
      );
      assert.deepEqual(
        [...oracle.refusals].map(([what, n]) => `${what}: ${n}`),
        refusedBefore,
        'writes refused while one replica of three was out of the set',
      );

      link.heal();
      await topic.untilEvery(
        kit.brokers,
        (r) => r.primary === primary.address && r.replicas.length === 2 && r.replicas.includes(slow.address),
        'the slow replica caught up and back in the in-sync set',
        20_000,
      );
      await oracle.acknowledgedMore(50, 30_000);
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      healAll();
      await oracle.stop();
    }
    oracle.check(await topic.finalLog());
    await topic.sameLogsEverywhere();
  });
  test('replicas cut out of the in-sync set by delayed links rejoin it once the delays are lifted, with no producer running', async (t) => {
    // minInSync 1: writes go on with both replicas out, so nothing is left for them to commit and the
    // commit offset never moves again once the producers stop: only the primary's own timer can
    // bring them back. Their last answers arrive together, so one rejoins while the other's change
    // of the in-sync set is being written.
    const topic = new ReplicatedTopic(kit, 'idle-rejoin', random);
    await topic.create(3, { labels: { minInSync: '1' } });
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(2);
    try {
      await oracle.acknowledgedMore(20, 30_000);
      const primary = await topic.primary(5000);
      const p = topic.indexOf(primary);
      const replicas = kit.brokers.filter((b) => b !== primary);
      for (const r of replicas) kit.peerLink(p, topic.indexOf(r)).delay(SLOW_MS);
      await until(
        () => topic.routeVia(primary),
        (r) => r.primary === primary.address && r.replicas.length === 0,
        'both slowed replicas out of the in-sync set',
        LAG_MAX_MS + 2 * SLOW_MS + 5000,
      );
      await oracle.acknowledgedMore(20, SLOW_MS);
      // From here on nothing is written. The primary's etcd link is slowed too (well within its lease), so
      // the one replica's return takes long enough to be written that the other's answer comes meanwhile.
      await oracle.stop();
      kit.etcdLink(p).delay(ETCD_SLOW_MS);
      for (const r of replicas) kit.peerLink(p, topic.indexOf(r)).heal();
      const healedAt = performance.now();
      // What the delays still hold arrives within two delays; both replicas are level then.
      await topic.untilEvery(
        kit.brokers,
        (r) => r.primary === primary.address && r.replicas.length === 2,
        'both idle replicas back in the in-sync set',
        2 * SLOW_MS + LAG_MAX_MS + 5000,
      );
      t.diagnostic(
        `both back in the in-sync set ${(performance.now() - healedAt).toFixed(0)} ms after the heal`,
      );
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      healAll();
      await oracle.stop();
    }
    oracle.check(await topic.finalLog());
    await topic.sameLogsEverywhere();
  });
  test('a replica whose link is slow but within the lag bound stays in the in-sync set across a write to an idle partition', async () => {
    const topic = new ReplicatedTopic(kit, 'idle-write', random);
    await topic.create();
    const primary = await topic.primary(5000);
    const p = topic.indexOf(primary);
    const slow = kit.brokers.find((b) => b !== primary)!;
    const client = await connect(primary.address);
    try {
      assert.equal(await sendProduce(client, topic.name, 'first'), ErrorCode.NONE);
      // Each answer takes a round trip of the delay, far below the lag bound; the partition then
      // sits idle for longer than the lag bound before the next write.
      kit.peerLink(p, topic.indexOf(slow)).delay(IDLE_LINK_MS);
      await new Promise((resolve) => setTimeout(resolve, 2 * LAG_MAX_MS));
      assert.equal(await sendProduce(client, topic.name, 'second'), ErrorCode.NONE);
      const deadline = performance.now() + 2 * LAG_MAX_MS;
      while (performance.now() < deadline) {
        const r = await topic.routeVia(primary);
        assert.equal(r.replicas.length, 2, `${slow.name} dropped from the in-sync set: ${JSON.stringify(r)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      client.close();
      healAll();
    }
  });
});
