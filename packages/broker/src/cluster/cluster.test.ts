import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  decodeListFragmentsResponse,
  decodeNotPrimary,
  decodeProduceResponse,
  ErrorCode,
  encodeApplyRequest,
  encodeFetchRequestV2,
  encodeListFragmentsRequest,
  encodeProduceRequest,
  encodeProduceRequestV3,
  errorName,
  FragmentLocation,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { startCli, startProcess } from '@booblik/testkit';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import {
  connect,
  createTopic,
  fetchAll,
  metadata,
  ok,
  primaries,
  produceV1,
  until,
  untilListed,
} from '../test-support/cluster-wire.js';

const LEASE_MS = 2000;
/** What the issue allows between a broker's death and its partitions shown without a primary. */
const NO_PRIMARY_WITHIN_MS = LEASE_MS + 1000;

describe('a three-broker cluster on a real etcd', () => {
  let kit: ClusterKit;
  /** What was acknowledged, by `topic/partition`: the payloads at offsets 0, 1, ... */
  const acknowledged = new Map<string, string[]>();

  before(async () => {
    kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS, flags: ['--default.replication=1'] });
  });
  after(async () => {
    await kit?.cleanup();
  });

  const broker = (name: string): KitBroker => kit.brokers.find((b) => b.name === name)!;
  const byAddress = (address: string): KitBroker => kit.brokers.find((b) => b.address === address)!;

  async function produceAcknowledged(via: KitBroker, topic: string, partition: number, records: string[]) {
    const client = await connect(via.address);
    try {
      const base = await produceV1(client, topic, partition, records);
      const log = acknowledged.get(`${topic}/${partition}`) ?? [];
      assert.equal(base, log.length, `${topic}-${partition}: appended at the end of what was acknowledged`);
      log.push(...records);
      acknowledged.set(`${topic}/${partition}`, log);
    } finally {
      client.close();
    }
  }

  test('a topic applied through broker 1 reaches brokers 2 and 3 through their watch', async () => {
    const watchers = await Promise.all([connect(broker('b2').address), connect(broker('b3').address)]);
    // Watches held from before the APPLY: each answer is the broker's etcd watch firing, not a poll.
    const seen = watchers.map((w) =>
      untilListed(
        w,
        (l) => l.topics.find((t) => t.spec.name === 'orders')?.spec.partitions === 6,
        'orders listed',
        10_000,
      ),
    );
    const applier = await connect(broker('b1').address);
    await createTopic(applier, 'orders', 6);
    await Promise.all(seen);
    for (const c of [...watchers, applier]) c.close();
  });

  test('APPLY answers once every new partition has a primary, spread over the three brokers', async () => {
    const client = await connect(broker('b1').address);
    const routes = await primaries(client, 'orders');
    client.close();
    assert.ok(
      routes.every((r) => r !== ''),
      `every partition has a primary: ${routes}`,
    );
    assert.deepEqual(new Set(routes), new Set(kit.brokers.map((b) => b.address)), 'each broker serves some');
    const gauges = async (b: KitBroker) => {
      const text = await (await fetch(`http://127.0.0.1:${b.httpPort}/metrics`)).text();
      const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
      return {
        members: read('booblik_cluster_members'),
        leader: read('booblik_cluster_leader'),
        owned: read('booblik_cluster_owned_partitions'),
      };
    };
    const seen = await Promise.all(kit.brokers.map(gauges));
    assert.deepEqual(
      seen.map((g) => g.members),
      [3, 3, 3],
    );
    assert.deepEqual(
      seen.map((g) => g.leader),
      [1, 0, 0],
      'b1, the oldest member, leads',
    );
    assert.equal(
      seen.reduce((n, g) => n + g.owned, 0),
      6 + 1,
      'orders and default, each partition owned once',
    );
  });

  test('records produced through each broker are fetched through each other broker, same offsets', async () => {
    for (const via of kit.brokers) {
      for (let p = 0; p < 6; p++)
        await produceAcknowledged(via, 'orders', p, [`via-${via.name}-${p}-a`, `via-${via.name}-${p}-b`]);
    }
    for (const reader of kit.brokers) {
      const client = await connect(reader.address);
      for (let p = 0; p < 6; p++) {
        assert.deepEqual(
          await fetchAll(client, 'orders', p),
          acknowledged.get(`orders/${p}`),
          `orders-${p} read via ${reader.name}`,
        );
      }
      client.close();
    }
  });

  test('pipelined requests for partitions on three brokers are answered in request order', async () => {
    const client = await connect(broker('b1').address);
    const ids: number[] = [];
    const frames: Buffer[] = [];
    for (let i = 0; i < 60; i++) {
      const id = client.id();
      ids.push(id);
      const partition = i % 6;
      frames.push(
        i % 3 === 2
          ? encodeFetchRequestV2(id, {
              topic: 'orders',
              partition,
              fetchOffset: 0,
              maxBytes: 1 << 16,
              maxWaitMs: 0,
              minBytes: 0,
            })
          : encodeProduceRequest(id, {
              topic: 'orders',
              partition,
              ack: 1,
              records: [Buffer.from(`pipelined-${i}`)],
            }),
      );
    }
    client.send(Buffer.concat(frames)); // one write: every request in flight at once
    const answered: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const frame = await client.next();
      assert.ok(frame !== null, 'connection closed early');
      assert.equal(frame.errorCode, ErrorCode.NONE);
      answered.push(frame.correlationId);
      if (i % 3 === 2) continue;
      // The oracle: each acknowledged record at the offset its answer gave.
      const log = acknowledged.get(`orders/${i % 6}`)!;
      assert.equal(decodeProduceResponse(frame.body).baseOffset, log.length);
      log.push(`pipelined-${i}`);
    }
    assert.deepEqual(answered, ids);
    client.close();
  });

  test('a just-created topic is usable through any broker with the revision APPLY returned', async () => {
    const applier = await connect(broker('b2').address);
    const revision = await createTopic(applier, 'fresh', 3);
    applier.close();
    const other = await connect(broker('b3').address);
    const md = await metadata(other, ['fresh'], revision);
    assert.ok(md.revision >= revision);
    assert.deepEqual(
      md.topics[0]!.partitions.map((p) => p.route.primary !== ''),
      [true, true, true],
      'every partition routed at that revision',
    );
    // Usable at once through the same broker.
    assert.equal(await produceV1(other, 'fresh', 0, ['first']), 0);
    acknowledged.set('fresh/0', ['first']);
    other.close();
  });

  test('a route-following client is told NOT_PRIMARY with the route, and the primary takes the batch', async () => {
    const client = await connect(broker('b1').address);
    const routes = await primaries(client, 'orders');
    const elsewhere = routes.findIndex((r) => r !== broker('b1').address);
    const id = client.id();
    client.send(
      encodeProduceRequestV3(id, {
        topic: 'orders',
        partition: elsewhere,
        ack: 1,
        records: [Buffer.from('routed')],
      }),
    );
    const answer = await client.expect(id);
    client.close();
    assert.equal(errorName(answer.errorCode), 'NOT_PRIMARY');
    const route = decodeNotPrimary(answer.body);
    assert.equal(route.primary, routes[elsewhere]);
    await produceAcknowledged(byAddress(route.primary), 'orders', elsewhere, ['routed']);
  });

  test('booblik partitions move: an empty partition moves; one with records only with --abandon-records', async () => {
    const client = await connect(broker('b1').address);
    await createTopic(client, 'movable', 2);
    const before = await primaries(client, 'movable');
    const target = kit.brokers.find((b) => b.address !== before[0])!;
    const cli = (...args: string[]) => {
      const p = startCli(['partitions', 'move', ...args, '--broker', broker('b1').address]);
      return p.exitCode().then((code) => ({ code, output: p.output() }));
    };
    const moved = await cli('movable', '0', target.name);
    assert.equal(moved.code, 0, moved.output);
    assert.match(moved.output, new RegExp(`moved movable-0 to ${target.name} \\(revision \\d+\\)`));
    assert.equal((await primaries(client, 'movable'))[0], target.address, 'routed to the new owner at once');
    assert.equal(await produceV1(client, 'movable', 0, ['after-move']), 0);

    // Now it has a record: a move would leave it behind, so it is refused unless asked for.
    const home = kit.brokers.find((b) => b.address !== target.address)!;
    const refused = await cli('movable', '0', home.name);
    assert.equal(refused.code, 1);
    assert.match(refused.output, /has 1 record\(s\) written, which a move .*--abandon-records to move/);
    assert.equal((await primaries(client, 'movable'))[0], target.address, 'nothing moved');
    const forced = await cli('movable', '0', home.name, '--abandon-records');
    assert.equal(forced.code, 0, forced.output);
    assert.deepEqual(await fetchAll(client, 'movable', 0), [], 'the new owner starts it empty');
    const unknown = await cli('movable', '1', 'nobody');
    assert.match(unknown.output, /member: "nobody" is not a live member/);
    client.close();
  });

  test('a SIGKILLed broker: its partitions show no primary within lease + 1 s, the rest serve, and it returns with every acknowledged record', async () => {
    const victim = broker('b3');
    const observer = await connect(broker('b2').address);
    const before = await primaries(observer, 'orders');
    const victims = before.flatMap((r, p) => (r === victim.address ? [p] : []));
    const survivors = before.flatMap((r, p) => (r !== victim.address ? [p] : []));
    assert.ok(victims.length > 0 && survivors.length > 0);

    const killedAt = performance.now();
    await victim.kill();
    await untilListed(
      observer,
      (l) => {
        const routes = l.topics.find((t) => t.spec.name === 'orders')!.routes;
        return victims.every((p) => routes[p]!.primary === '');
      },
      'no primary for the dead broker partitions',
      NO_PRIMARY_WITHIN_MS + 2000,
    );
    const elapsed = performance.now() - killedAt;
    assert.ok(elapsed <= NO_PRIMARY_WITHIN_MS, `shown without a primary after ${elapsed.toFixed(0)} ms`);

    // The others keep serving, through any live broker.
    for (const p of survivors) await produceAcknowledged(broker('b1'), 'orders', p, [`while-b3-dead-${p}`]);
    const id = observer.id();
    observer.send(
      encodeProduceRequestV3(id, {
        topic: 'orders',
        partition: victims[0]!,
        ack: 1,
        records: [Buffer.from('x')],
      }),
    );
    const refused = await observer.expect(id);
    assert.equal(errorName(refused.errorCode), 'NO_PRIMARY');
    assert.equal(refused.errorCode, ErrorCode.NO_PRIMARY);

    await victim.start();
    await untilListed(
      observer,
      (l) =>
        victims.every(
          (p) => l.topics.find((t) => t.spec.name === 'orders')!.routes[p]!.primary === victim.address,
        ),
      'the restarted broker serves its partitions again',
      15_000,
    );
    for (const p of victims) {
      assert.deepEqual(
        await fetchAll(observer, 'orders', p),
        acknowledged.get(`orders/${p}`),
        `orders-${p} after the restart`,
      );
    }
    observer.close();
  });

  test('a SIGKILLed allocator leader: another takes over within lease + 1 s and assigns the next new topic', async () => {
    const leader = broker('b1'); // the oldest member
    await leader.kill();
    const client = await connect(broker('b2').address);
    const killedAt = performance.now();
    // APPLY through a survivor; it answers once the new leader assigned every partition (or gives up at 5 s).
    await untilListed(
      client,
      (l) => !l.topics.some((t) => t.routes.some((r) => r.primary === leader.address)),
      'the old leader gone',
      NO_PRIMARY_WITHIN_MS + 2000,
    );
    await createTopic(client, 'after-leader', 4);
    const routes = await primaries(client, 'after-leader');
    const elapsed = performance.now() - killedAt;
    assert.ok(
      routes.every((r) => r !== '' && r !== leader.address),
      `assigned to the survivors: ${routes}`,
    );
    assert.ok(elapsed <= NO_PRIMARY_WITHIN_MS + 1000, `assigned ${elapsed.toFixed(0)} ms after the kill`);
    client.close();
    await leader.start();
  });

  test('etcd stopped: produce and fetch go on for assigned partitions, APPLY says CLUSTER_UNAVAILABLE, all resumes when etcd is back', async () => {
    const via = broker('b2');
    const client = await connect(via.address);
    const routes = await primaries(client, 'orders');
    await kit.etcd.stop('SIGKILL');
    try {
      for (let p = 0; p < 6; p++) await produceAcknowledged(via, 'orders', p, [`etcd-down-${p}`]);
      for (let p = 0; p < 6; p++)
        assert.deepEqual(await fetchAll(client, 'orders', p), acknowledged.get(`orders/${p}`));
      const id = client.id();
      client.send(
        encodeApplyRequest(id, {
          dryRun: false,
          changes: [
            { op: 'upsert', spec: topicSpecWithDefaults({ name: 'while-down', partitions: 1, revision: 0 }) },
          ],
        }),
      );
      const refused = await client.expect(id);
      assert.equal(errorName(refused.errorCode), 'CLUSTER_UNAVAILABLE');
      assert.deepEqual(await primaries(client, 'orders'), routes, 'routes as they were');
    } finally {
      await kit.etcd.restart();
    }
    // Back: an APPLY goes through, and the new topic is served.
    const revision = await untilCreated(client, 'after-etcd', 2);
    // The APPLY waits up to 5 s for primaries; an allocator whose leader is still coming back from
    // the outage (leases lapsed meanwhile) may take longer: routed soon after, bounded.
    await until(
      () => metadata(client, ['after-etcd'], revision),
      (md) => md.topics[0]!.partitions.every((p) => p.route.primary !== ''),
      'the new topic routed once etcd is back',
      20_000,
    );
    client.close();
  });

  test('an APPLY sent while etcd is paused is answered OUTCOME_UNKNOWN, not refused, and sent again with its expected revision it is applied exactly once', async () => {
    const client = await connect(broker('b1').address);
    const pid = kit.etcd.pid!;
    process.kill(pid, 'SIGSTOP');
    let answer: string;
    try {
      const id = client.id();
      client.send(
        encodeApplyRequest(id, {
          dryRun: false,
          changes: [
            {
              op: 'upsert',
              spec: topicSpecWithDefaults({ name: 'while-paused', partitions: 1, revision: 0 }),
            },
          ],
        }),
      );
      // etcd holds the transaction in its socket; the broker's deadline passes without an answer.
      answer = errorName((await client.expect(id)).errorCode);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    assert.equal(answer, 'OUTCOME_UNKNOWN', 'the transaction reached etcd: its outcome is not known');
    // etcd may have applied it when it woke, or dropped it as cancelled. Sent again with the same
    // expected revision (0: must not exist), it is created exactly once: applied now, or refused
    // because it was applied then.
    // (Refused outright while the brokers rejoin after etcd's pause: sent again until taken.)
    let again = '';
    await until(
      async () => {
        const frame = await client.apply([
          { op: 'upsert', spec: topicSpecWithDefaults({ name: 'while-paused', partitions: 1, revision: 0 }) },
        ]);
        again = errorName(frame.errorCode);
        return again;
      },
      (code) => code !== 'CLUSTER_UNAVAILABLE',
      'the same APPLY again, once etcd answers',
      20_000,
    );
    assert.ok(['NONE', 'REVISION_MISMATCH'].includes(again), `the same APPLY again: ${again}`);
    await untilListed(
      client,
      (l) => l.topics.filter((t) => t.spec.name === 'while-paused').length === 1,
      'the topic exists once',
      20_000,
    );
    client.close();
  });

  test('a broker whose lease lapsed while etcd was down is not ready, keeps serving, and rejoins under its id when etcd is back', async () => {
    const b2 = broker('b2');
    const ready = async () => (await fetch(`http://127.0.0.1:${b2.httpPort}/readyz`)).status;
    // Ready first: after the test before paused etcd, a broker may still be joining again.
    await until(ready, (status) => status === 200, '/readyz 200 before etcd goes', 20_000);
    const client = await connect(b2.address);
    const owned = (await primaries(client, 'orders')).flatMap((r, p) => (r === b2.address ? [p] : []));
    await kit.etcd.stop('SIGKILL');
    try {
      await until(ready, (status) => status === 503, '/readyz 503 once the lease is gone', LEASE_MS * 4);
      // Still serving what it has open.
      await produceAcknowledged(b2, 'orders', owned[0]!, ['lease-lapsed']);
    } finally {
      await kit.etcd.restart();
    }
    await until(ready, (status) => status === 200, '/readyz 200 after joining again', 20_000);
    await untilListed(
      client,
      (l) =>
        owned.every((p) => l.topics.find((t) => t.spec.name === 'orders')!.routes[p]!.primary === b2.address),
      'its partitions assigned to it again',
      20_000,
    );
    assert.deepEqual(await fetchAll(client, 'orders', owned[0]!), acknowledged.get(`orders/${owned[0]}`));
    client.close();
  });

  async function untilCreated(
    client: Awaited<ReturnType<typeof connect>>,
    name: string,
    partitions: number,
  ): Promise<number> {
    const deadline = performance.now() + 20_000;
    for (;;) {
      try {
        return await createTopic(client, name, partitions);
      } catch (error) {
        if (performance.now() > deadline || !String(error).includes('CLUSTER_UNAVAILABLE')) throw error;
      }
    }
  }

  test("a topic with a store: its owner's data directory emptied while it is down, its history comes back from the store", async () => {
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cluster-store-'));
    const client = await connect(broker('b1').address);
    try {
      const spec = {
        ...topicSpecWithDefaults({ name: 'stored', partitions: 1, revision: 0 }),
        storeUrl: `file://${storeDir}`,
        segmentBytes: 16_384,
      };
      const applied = await client.apply([{ op: 'upsert', spec }]);
      assert.equal(errorName(applied.errorCode), 'NONE');
      // Assigned at once; its owner answers for it once it has read its (empty) manifest.
      const routed = await until(
        () => primaries(client, 'stored'),
        (r) => r[0] !== '',
        'stored-0 served',
        10_000,
      );
      assert.ok(routed >= 0);
      const owner = byAddress((await primaries(client, 'stored'))[0]!);
      for (let i = 0; i < 20; i++) {
        await produceAcknowledged(
          owner,
          'stored',
          0,
          Array.from({ length: 10 }, (_, k) => `stored-${i * 10 + k}-${'x'.repeat(300)}`),
        );
      }
      // Wait for the owner to persist its closed segments: LIST_FRAGMENTS on the owner says where each lives.
      const ownerClient = await connect(owner.address);
      let persistedEnd = 0;
      await until(
        async () => {
          const id = ownerClient.id();
          ownerClient.send(encodeListFragmentsRequest(id, { topic: 'stored', partition: 0 }));
          const [p] = decodeListFragmentsResponse(ok(await ownerClient.expect(id), 'LIST_FRAGMENTS'));
          const closed = p!.fragments.slice(0, -1);
          persistedEnd = closed.at(-1)?.endOffset ?? 0;
          return closed.length >= 3 && closed.every((f) => f.location === FragmentLocation.BOTH);
        },
        (done) => done,
        'closed segments persisted',
        30_000,
      );
      ownerClient.close();

      await owner.kill();
      fs.rmSync(owner.dataDir, { recursive: true, force: true });
      await owner.start();
      const other = await connect(kit.brokers.find((b) => b !== owner)!.address);
      await untilListed(
        other,
        (l) => l.topics.find((t) => t.spec.name === 'stored')?.routes[0]?.primary === owner.address,
        'the owner serves it again',
        20_000,
      );
      const log = acknowledged.get('stored/0')!;
      // What its disk alone held (the active segment) went with the disk; everything persisted is back.
      assert.deepEqual(await fetchAll(other, 'stored', 0), log.slice(0, persistedEnd));
      assert.equal(await produceV1(other, 'stored', 0, ['after-restore']), persistedEnd, 'offsets continue');
      other.close();
    } finally {
      if (!client.closed) client.close();
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  });

  test("a broker started on another cluster's data directory is refused, and the directory is untouched", async () => {
    const taken = broker('b2').dataDir;
    const before = fs.readFileSync(`${taken}/cluster.json`, 'utf8');
    const p = startProcess([
      `--data.dir=${taken}`,
      '--port=0',
      '--http.port=-1',
      `--cluster.etcd=${kit.etcd.endpoint}`,
      '--cluster.name=another',
    ]);
    // b2 is running on it: the data-directory lock refuses first. Stop b2 to see the identity refusal.
    assert.equal(await p.exitCode(), 2, p.output());
    await broker('b2').stop();
    const q = startProcess([
      `--data.dir=${taken}`,
      '--port=0',
      '--http.port=-1',
      `--cluster.etcd=${kit.etcd.endpoint}`,
      '--cluster.name=another',
    ]);
    assert.equal(await q.exitCode(), 2, q.output());
    assert.match(q.output(), /belongs to cluster kit\S+, not another/);
    const r = startProcess([`--data.dir=${taken}`, '--port=0', '--http.port=-1']);
    assert.equal(await r.exitCode(), 2, r.output());
    assert.match(r.output(), /belongs to broker b2 of cluster/);
    assert.equal(fs.readFileSync(`${taken}/cluster.json`, 'utf8'), before);
    await broker('b2').start();
  });
});
