import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeNotPrimary, ErrorCode, LAG_UNKNOWN, ReplicaFlag, type RouteV2 } from '@booblik/protocol';
import { startCli } from '@booblik/testkit';
import {
  type ClusterKit,
  type KitBroker,
  replicaReads,
  startClusterKit,
} from '../test-support/cluster-kit.js';
import { connect, fetchV4, listV2, metadataV4, produceV1, until } from '../test-support/cluster-wire.js';
import { fetched } from '../test-support/raw-client.js';
import { ReplicatedTopic } from '../test-support/replicated-topic.js';
import { seeded, withTimeout } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;
const LAG_MAX_MS = 1000;
/** The slow replica's link: every byte each way this late, well past the lag bound. */
const SLOW_MS = 3 * LAG_MAX_MS;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);
const BOTH = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;

describe('reads from replicas (FETCH v4) and RouteV2 (METADATA v4, LIST v2): three brokers, R=3', () => {
  let kit: ClusterKit;
  const random = seeded(SEED);

  before(async () => {
    console.log(`replica read tests: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices)`);
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

  async function routeV2Via(via: KitBroker, topic: string): Promise<RouteV2> {
    const client = await connect(via.address);
    try {
      return (await withTimeout(metadataV4(client, [topic]), 3000, `METADATA v4 via ${via.name}`)).topics[0]!
        .partitions[0]!.route;
    } finally {
      client.close();
    }
  }

  async function produce(primary: KitBroker, topic: string, records: string[]): Promise<number> {
    const client = await connect(primary.address);
    try {
      return await produceV1(client, topic, 0, records);
    } finally {
      client.close();
    }
  }

  test('an in-sync replica answers FETCH v4 from its own copy, and METADATA v4 / LIST v2 show the epoch, every replica with its zone, the in-sync set and the lag', async () => {
    const topic = new ReplicatedTopic(kit, 'near', random);
    await topic.create(3);
    const primary = await topic.primary(10_000);
    const replicas = kit.brokers.filter((b) => b !== primary);
    const records = Array.from({ length: 50 }, (_, i) => `near-${i}`);
    await produce(primary, topic.name, records);

    for (const replica of replicas) {
      const before = await replicaReads(replica.httpPort);
      const client = await connect(replica.address);
      try {
        // The replica learns the commit offset a heartbeat after the primary: wait on it, bounded.
        await until(
          async () => fetched(await fetchV4(client, topic.name, 0, 0, 1000), 0),
          (a) => a.highWatermark === records.length && a.records.length === records.length,
          `${replica.name} serves every record itself`,
          5000,
        );
        const answer = fetched(await fetchV4(client, topic.name, 0, 0), 0);
        assert.deepEqual(answer.records, records, `${replica.name}: the primary's records, at their offsets`);
        assert.ok(
          (await replicaReads(replica.httpPort)) > before,
          `${replica.name} answered FETCH v4 itself`,
        );

        // Past what the replica holds: it sends the reader to the primary rather than refuse the offset.
        const beyond = await fetchV4(client, topic.name, 0, records.length + 1);
        assert.equal(beyond.errorCode, ErrorCode.NOT_PRIMARY, 'an offset past the replica log end');
        assert.equal(decodeNotPrimary(beyond.body).primary, primary.address);

        // At the high watermark it waits like the primary, and wakes with the next record.
        const held = fetchV4(client, topic.name, 0, records.length, 5000);
        await produce(primary, topic.name, [`woken-${replica.name}`]);
        const woken = fetched(await held, records.length);
        assert.deepEqual(
          woken.records,
          [`woken-${replica.name}`],
          'a long poll on a replica wakes on the commit',
        );
        records.push(`woken-${replica.name}`);
      } finally {
        client.close();
      }
    }

    // The lags are filled from the primary, even through another broker.
    const via = replicas[0]!;
    const route = await until(
      () => routeV2Via(via, topic.name),
      (r) => r.replicas.length === 3 && r.replicas.every((x) => x.lagRecords === 0),
      'METADATA v4 via a replica shows every replica level',
      5000,
    ).then(() => routeV2Via(via, topic.name));
    assert.equal(route.primary, primary.address);
    assert.equal(route.replicas[0]!.address, primary.address, 'the primary is listed first');
    for (const b of kit.brokers) {
      const r = route.replicas.find((x) => x.address === b.address);
      assert.ok(r !== undefined, `${b.name} listed among the replicas: ${JSON.stringify(route)}`);
      assert.equal(r.member, b.name);
      assert.equal(r.zone, b.zone, `${b.name}'s zone`);
      assert.equal(r.flags, BOTH, `${b.name} in sync and live`);
      assert.ok(r.lagMillis >= 0, `${b.name}'s lag in ms is known: ${r.lagMillis}`);
    }

    const lister = await connect(replicas[1]!.address);
    try {
      const listed = (await listV2(lister)).topics.find((t) => t.spec.name === topic.name)!;
      const r = listed.routes[0]!;
      assert.equal(r.epoch, route.epoch, 'LIST v2 and METADATA v4 agree on the epoch');
      assert.deepEqual(
        r.replicas.map((x) => [x.member, x.zone, x.flags, x.lagRecords, x.lagMillis]),
        route.replicas.map((x) => [x.member, x.zone, x.flags, LAG_UNKNOWN, LAG_UNKNOWN]),
        'LIST v2 shows the same replicas, without lag',
      );
    } finally {
      lister.close();
    }
  });

  test('a replica out of the in-sync set answers FETCH v4 with NOT_PRIMARY and the primary, then serves again once back in sync', async () => {
    const topic = new ReplicatedTopic(kit, 'far', random);
    await topic.create(3);
    const primary = await topic.primary(10_000);
    const slow = kit.brokers.find((b) => b !== primary)!;
    await produce(primary, topic.name, ['far-0']);
    const link = kit.peerLink(topic.indexOf(primary), topic.indexOf(slow));
    link.delay(SLOW_MS);
    let written = 1;
    try {
      const left = await until(
        async () => {
          await produce(primary, topic.name, [`far-${written++}`]);
          return routeV2Via(primary, topic.name);
        },
        (r) => {
          const s = r.replicas.find((x) => x.address === slow.address);
          return s !== undefined && (s.flags & ReplicaFlag.IN_SYNC) === 0;
        },
        `${slow.name} out of the in-sync set`,
        LAG_MAX_MS + 2 * SLOW_MS + 5000,
      ).then(() => routeV2Via(primary, topic.name));
      const shown = left.replicas.find((x) => x.address === slow.address)!;
      assert.equal(shown.flags, ReplicaFlag.LIVE, 'live, not in sync');
      assert.ok(shown.lagMillis > LAG_MAX_MS, `its lag is past the bound: ${JSON.stringify(shown)}`);

      const client = await connect(slow.address);
      try {
        // The replica's own copy of the owner record shows it out of the set: it sends readers away.
        const refused = await until(
          () => fetchV4(client, topic.name, 0, 0),
          (f) => f.errorCode === ErrorCode.NOT_PRIMARY,
          `${slow.name} refuses FETCH v4`,
          5000,
        ).then(() => fetchV4(client, topic.name, 0, 0));
        assert.equal(decodeNotPrimary(refused.body).primary, primary.address);

        link.heal();
        await until(
          () => routeV2Via(primary, topic.name),
          (r) => r.replicas.every((x) => x.flags === BOTH),
          `${slow.name} back in sync`,
          20_000,
        );
        const served = await until(
          () => fetchV4(client, topic.name, 0, 0),
          (f) => f.errorCode === ErrorCode.NONE && fetched(f, 0).records.length === written,
          `${slow.name} serves FETCH v4 again`,
          5000,
        ).then(() => fetchV4(client, topic.name, 0, 0));
        assert.deepEqual(
          fetched(served, 0).records,
          Array.from({ length: written }, (_, i) => `far-${i}`),
        );
      } finally {
        client.close();
      }
    } catch (error) {
      for (const b of kit.brokers) {
        const lines = (b.process?.lines ?? []).filter((l) => /far|sync|primary/.test(l));
        console.log(`--- ${b.name} (${b.address})\n${lines.slice(-30).join('\n')}`);
      }
      throw error;
    } finally {
      link.heal();
    }
  });

  test('the CLI: metadata shows the epoch, primary and in-sync replicas, consume --prefer-zone reads from that zone, and a move prints the new replica catching up', async () => {
    const topic = new ReplicatedTopic(kit, 'cli', random);
    await topic.create(2);
    const primary = await topic.primary(10_000);
    const holders = await until(
      () => routeV2Via(primary, topic.name),
      (r) => r.replicas.length === 2 && r.replicas.every((x) => x.flags === BOTH),
      'both replicas in sync',
      10_000,
    ).then(() => routeV2Via(primary, topic.name));
    const replica = kit.brokers.find(
      (b) => b !== primary && holders.replicas.some((x) => x.member === b.name),
    )!;
    const outsider = kit.brokers.find((b) => b !== primary && b !== replica)!;
    const records = Array.from({ length: 2000 }, (_, i) => `cli-${i}`);
    for (let i = 0; i < records.length; i += 500)
      await produce(primary, topic.name, records.slice(i, i + 500));
    const cli = async (...args: string[]) => {
      const p = startCli([...args, '--broker', replica.address]);
      return { code: await p.exitCode(60_000), output: p.output() };
    };

    const shown = await cli('metadata', topic.name);
    assert.equal(shown.code, 0, shown.output);
    const [header, row] = shown.output.trim().split('\n');
    assert.match(header!, /EPOCH\s+PRIMARY\s+IN_SYNC\s+OUT_OF_SYNC\s+LAG/);
    assert.match(row!, new RegExp(`\\b${primary.name}@${primary.zone}\\b`), 'the primary, with its zone');
    assert.match(row!, new RegExp(`${replica.name}@${replica.zone}`), 'the replica among the in-sync');

    const servedBefore = await replicaReads(replica.httpPort);
    const consumed = await cli('consume', topic.name, '--prefer-zone', replica.zone, '--max-records', '2000');
    assert.equal(consumed.code, 0, consumed.output);
    assert.deepEqual(consumed.output.trim().split('\n'), records, 'every record, in order');
    assert.ok((await replicaReads(replica.httpPort)) > servedBefore, 'read from the replica of that zone');

    // A slow link to the new member makes its catch-up take a few round trips: the CLI shows it.
    const link = kit.peerLink(topic.indexOf(primary), topic.indexOf(outsider));
    link.delay(300);
    try {
      const moved = await cli('partitions', 'move', topic.name, '0', outsider.name);
      assert.equal(moved.code, 0, moved.output);
      assert.match(moved.output, new RegExp(`cli-0: ${outsider.name} catching up`), moved.output);
      assert.match(moved.output, new RegExp(`moved cli-0 to ${outsider.name}`));
    } finally {
      link.heal();
    }
  });
});
