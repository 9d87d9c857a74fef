import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  decodeListFragmentsResponse,
  ErrorCode,
  encodeListFragmentsRequest,
  FragmentLocation,
  type TopicSpec,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { startCli } from '@booblik/testkit';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, fetchAll, metadata, ok, until } from '../test-support/cluster-wire.js';
import { ReplicationOracle, seeded, withTimeout } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;
const LAG_MAX_MS = 1000;
/** The bound: writes resume within lease + 2 s of a primary's death. */
const RESUME_WITHIN_MS = LEASE_MS + 2000;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);
/** The short form in `npm test`; `npm run soak` runs the twenty. */
const KILL_ROUNDS = Number(process.env.BOOBLIK_REPLICATION_ROUNDS ?? (process.env.BOOBLIK_SOAK ? 20 : 3));

describe('replication: three brokers, R=3, a real etcd', () => {
  let kit: ClusterKit;
  const random = seeded(SEED);

  before(async () => {
    console.log(`replication tests: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices)`);
    kit = await startClusterKit({
      brokers: 3,
      leaseMs: LEASE_MS,
      flags: [`--replica.lag.max.millis=${LAG_MAX_MS}`],
      faultLinks: true,
    });
  });
  after(async () => {
    await kit?.cleanup();
  });

  const stopped = new Set<KitBroker>();
  const up = () =>
    kit.brokers.filter(
      (b) =>
        b.process !== undefined && b.process.proc.exitCode === null && b.process.proc.signalCode === null,
    );
  const byAddress = (address: string): KitBroker => kit.brokers.find((b) => b.address === address)!;

  /** What the brokers said about roles and replicas, for a failure's report. */
  function dumpLogs(): void {
    for (const b of kit.brokers) {
      const lines = (b.process?.lines ?? []).filter((l) =>
        /primary|replica|allocator|epoch|sync|diverged|lease/.test(l),
      );
      console.log(`--- ${b.name} (${b.address})\n${lines.slice(-40).join('\n')}`);
    }
  }

  async function createReplicated(name: string, extra: Partial<TopicSpec> = {}): Promise<void> {
    const client = await connect(kit.brokers[0]!.address);
    const frame = await client.apply([
      {
        op: 'upsert',
        spec: { ...topicSpecWithDefaults({ name, partitions: 1, revision: 0 }), replication: 3, ...extra },
      },
    ]);
    ok(frame, `APPLY ${name}`);
    client.close();
  }

  /** The partition's route as a running broker answers it (a stopped one answers nothing). */
  async function route(name: string) {
    const running = up().filter((b) => !stopped.has(b));
    const client = await connect(running[Math.floor(random() * running.length)]!.address);
    try {
      return (await withTimeout(metadata(client, [name]), 3000, 'METADATA')).topics[0]!.partitions[0]!.route;
    } finally {
      client.close();
    }
  }

  async function primaryOf(name: string): Promise<KitBroker> {
    let primary = '';
    await until(
      () => route(name),
      (r) => {
        primary = r.primary;
        return r.primary !== '';
      },
      `${name} has a primary`,
      RESUME_WITHIN_MS + 5000,
    );
    return byAddress(primary);
  }

  /** Every record of the partition, read from its primary once the faults are over. */
  async function finalLog(name: string, replicas = 2): Promise<string[]> {
    await until(
      () => route(name),
      (r) => r.primary !== '' && r.replicas.length === replicas,
      `${name}: a primary and both replicas in sync again`,
      20_000,
    );
    const primary = await primaryOf(name);
    const client = await connect(primary.address);
    try {
      return await fetchAll(client, name, 0);
    } finally {
      client.close();
    }
  }

  /** The partition's segment bytes on each broker's disk: identical once every replica is in sync. */
  async function sameLogsEverywhere(name: string): Promise<void> {
    const bytesOf = (b: KitBroker) => {
      const dir = path.join(b.dataDir, `${name}-0`);
      return Buffer.concat(
        fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.log'))
          .sort()
          .map((f) => fs.readFileSync(path.join(dir, f))),
      );
    };
    await until(
      async () => kit.brokers.map((b) => bytesOf(b).toString('hex')),
      (logs) => logs.every((l) => l === logs[0]),
      `${name}: every replica's log identical`,
      20_000,
    );
  }

  test('a produce is acknowledged once all three hold it, and every replica has the same bytes', async () => {
    await createReplicated('r1');
    await until(
      () => route('r1'),
      (r) => r.primary !== '' && r.replicas.length === 2,
      'the route names a primary and both in-sync replicas',
      10_000,
    );
    const oracle = new ReplicationOracle('r1', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(3);
    oracle.startConsumer('c1');
    await oracle.acknowledgedMore(200, 30_000);
    await oracle.stop();
    oracle.check(await finalLog('r1'));
    await sameLogsEverywhere('r1');
    // The primary's /metrics: both replicas level (once their last acknowledgement is in), the
    // partition in its first epoch.
    const primary = await primaryOf('r1');
    let text = '';
    const lagsOf = async () => {
      text = await (await fetch(`http://127.0.0.1:${primary.httpPort}/metrics`)).text();
      return [
        ...text.matchAll(
          /^booblik_replication_lag_records\{topic="r1",partition="0",replica="(b\d)"\} (\d+)$/gm,
        ),
      ].map((m) => `${m[1]}=${m[2]}`);
    };
    await until(
      lagsOf,
      (lags) => lags.length === 2 && lags.every((l) => l.endsWith('=0')),
      'two replicas on the primary, nothing behind',
      10_000,
    );
    assert.match(text, /^booblik_partition_epoch\{topic="r1",partition="0"\} 1$/m);
  });

  test(`SIGKILL of the primary under load, ${KILL_ROUNDS} rounds: nothing acknowledged is lost, writes resume within lease + 2 s, readers of every replica see nothing taken back`, async () => {
    await createReplicated('r2');
    const oracle = new ReplicationOracle('r2', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(6);
    oracle.startConsumer('c1');
    oracle.startConsumer('c2');
    // And one reading from each broker's own copy (FETCH v4), whichever role it has.
    for (const b of kit.brokers) oracle.startPinnedConsumer(`on-${b.name}`, () => b.address);
    const resumedMs: number[] = [];
    try {
      for (let round = 0; round < KILL_ROUNDS; round++) {
        await oracle.acknowledgedMore(50, 30_000);
        const primary = await primaryOf('r2');
        // Its groups reach the replicas late: whatever it acknowledged without them would be lost now.
        const from = kit.brokers.indexOf(primary);
        const links = kit.brokers.flatMap((_, to) => (to === from ? [] : [kit.peerLink(from, to)]));
        for (const link of links) link.delay(200);
        await until(
          async () => links.every((l) => l.stats.bytesHeld > 0),
          (held) => held,
          'groups held on the links to both replicas',
          5000,
        );
        const killedAt = performance.now();
        await primary.kill();
        for (const link of links) link.heal();
        resumedMs.push(await oracle.firstAckAfter(killedAt, RESUME_WITHIN_MS + 5000));
        // It comes back as a replica: cuts what it had past the new primary's history, catches up.
        await primary.start();
        await until(
          () => route('r2'),
          (r) => r.replicas.length === 2,
          'the restarted broker back in the in-sync set',
          20_000,
        );
      }
      await oracle.acknowledgedMore(50, 30_000);
    } finally {
      await oracle.stop();
    }
    console.log(
      `writes resumed after a primary's SIGKILL in ${resumedMs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    );
    for (const ms of resumedMs)
      assert.ok(
        ms <= RESUME_WITHIN_MS,
        `writes resumed ${ms.toFixed(0)} ms after the kill, over ${RESUME_WITHIN_MS}`,
      );
    oracle.check(await finalLog('r2'));
    await sameLogsEverywhere('r2');
    for (const [name, answers] of oracle.pinnedAnswers) assert.ok(answers > 0, `${name} was served records`);
  });

  test('a primary SIGSTOPped past its lease acknowledges nothing once replaced, and cuts its divergent tail', async () => {
    await createReplicated('r3');
    const oracle = new ReplicationOracle('r3', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(4);
    oracle.startConsumer('c1');
    try {
      await oracle.acknowledgedMore(50, 30_000);
      const primary = await primaryOf('r3');
      primary.signal('SIGSTOP');
      stopped.add(primary);
      const stoppedAt = performance.now();
      // Its producers hang on it; others find the new primary once it is promoted.
      await until(
        () => route('r3'),
        (r) => r.primary !== '' && r.primary !== primary.address,
        'another broker promoted',
        RESUME_WITHIN_MS + 5000,
      );
      await oracle.firstAckAfter(stoppedAt, RESUME_WITHIN_MS + 5000);
      primary.signal('SIGCONT');
      stopped.delete(primary);
      await oracle.acknowledgedMore(50, 30_000);
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      for (const b of kit.brokers) b.signal('SIGCONT');
      stopped.clear();
      await oracle.stop();
    }
    oracle.check(await finalLog('r3'));
    await sameLogsEverywhere('r3');
  });

  test('a rolling restart of all three under load (SIGTERM each): nothing lost, writes stall under a second per broker', async () => {
    await createReplicated('r5');
    const oracle = new ReplicationOracle('r5', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(4);
    oracle.startConsumer('c1');
    const stalls: number[] = [];
    try {
      await oracle.acknowledgedMore(50, 30_000);
      for (const broker of kit.brokers) {
        const from = performance.now();
        await broker.stop();
        await oracle.acknowledgedMore(20, 30_000);
        stalls.push(oracle.longestStall(from, performance.now()));
        await broker.start();
        await until(
          () => route('r5'),
          (r) => r.primary !== '' && r.replicas.length === 2,
          `${broker.name} back in the in-sync set`,
          20_000,
        );
      }
      await oracle.acknowledgedMore(50, 30_000);
    } finally {
      await oracle.stop();
    }
    console.log(
      `longest stall of writes while each broker stopped: ${stalls.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    );
    for (const ms of stalls)
      assert.ok(ms < 1000, `writes stalled ${ms.toFixed(0)} ms while a broker restarted`);
    oracle.check(await finalLog('r5'));
    await sameLogsEverywhere('r5');
  });

  async function fragments(b: KitBroker, name: string) {
    const client = await connect(b.address);
    try {
      const id = client.id();
      client.send(encodeListFragmentsRequest(id, { topic: name, partition: 0 }));
      return decodeListFragmentsResponse(ok(await client.expect(id), 'LIST_FRAGMENTS'))[0]!.fragments;
    } finally {
      client.close();
    }
  }

  async function metric(b: KitBroker, pattern: RegExp): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${b.httpPort}/metrics`)).text();
    return Number(pattern.exec(text)?.[1] ?? 0);
  }

  /** Where the store's history of the partition ends, by the primary's LIST_FRAGMENTS, once >= `closed` are in it. */
  async function persistedEnd(b: KitBroker, name: string, closed: number): Promise<number> {
    let end = 0;
    await until(
      () => fragments(b, name),
      (fs) => {
        const stored = fs.filter(
          (f) => f.location === FragmentLocation.BOTH || f.location === FragmentLocation.STORE,
        );
        end = stored.at(-1)?.endOffset ?? 0;
        return stored.length >= closed;
      },
      `${closed} segment(s) of ${name} persisted`,
      30_000,
    );
    return end;
  }

  test('with a store: only the primary uploads; a replica on an emptied disk restores from the store and is copied only the tail; a new primary uploads on', async () => {
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-replicated-store-'));
    await createReplicated('rs', { storeUrl: `file://${storeDir}`, segmentBytes: 16_384 });
    const oracle = new ReplicationOracle('rs', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(3);
    const uploads = /^booblik_store_uploads_total (\d+)$/m;
    try {
      await oracle.acknowledgedMore(1500, 60_000);
      const primary = await primaryOf('rs');
      const stored = await persistedEnd(primary, 'rs', 2);
      const replicas = kit.brokers.filter((b) => b !== primary);
      assert.ok((await metric(primary, uploads)) >= 2, 'the primary uploaded its closed segments');
      for (const r of replicas)
        assert.equal(await metric(r, uploads), 0, `${r.name}, a replica, uploaded nothing`);

      // A replica's disk lost: it comes back with the store's history and is sent only what follows.
      const emptied = replicas[0]!;
      await emptied.kill();
      fs.rmSync(emptied.dataDir, { recursive: true, force: true });
      await emptied.start();
      await until(
        () => route('rs'),
        (r) => r.replicas.includes(emptied.address),
        `${emptied.name} back in the in-sync set`,
        30_000,
      );
      const copied = await metric(
        primary,
        new RegExp(
          `^booblik_replication_copied_records\\{topic="rs",partition="0",replica="${emptied.name}"\\} (\\d+)$`,
          'm',
        ),
      );
      const end = oracle.acknowledged.reduce((max, a) => Math.max(max, a.offset + 1), 0);
      assert.ok(
        copied <= end - stored + 1000,
        `copied ${copied} records of ${end}, though ${stored} were in the store`,
      );

      // The primary dies: a replica takes over and carries on uploading where the manifest ends.
      const newStored = stored;
      await primary.kill();
      const next = await primaryOf('rs');
      await oracle.acknowledgedMore(1500, 60_000);
      assert.ok(
        (await persistedEnd(next, 'rs', 3)) > newStored,
        'the new primary persisted further segments',
      );
      await primary.start();
    } finally {
      await oracle.stop();
    }
    oracle.check(await finalLog('rs'));
    fs.rmSync(storeDir, { recursive: true, force: true });
  });

  test('a replicated partition moved under load is copied before it switches; a drain moves it off a broker', async () => {
    await createReplicated('rm', { replication: 2 });
    const oracle = new ReplicationOracle('rm', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(3);
    oracle.startConsumer('c1');
    const cli = async (...args: string[]) => {
      const p = startCli([...args, '--broker', up()[0]!.address]);
      return { code: await p.exitCode(60_000), output: p.output() };
    };
    try {
      await oracle.acknowledgedMore(300, 30_000);
      const before = await route('rm');
      const outsider = kit.brokers.find(
        (b) => b.address !== before.primary && !before.replicas.includes(b.address),
      )!;
      const oldPrimary = byAddress(before.primary);
      const moved = await cli('partitions', 'move', 'rm', '0', outsider.name);
      assert.equal(moved.code, 0, moved.output);
      // Every broker's copy follows etcd's watch: the route everywhere within moments.
      await until(
        () => route('rm'),
        (r) => r.primary === outsider.address && !r.replicas.includes(oldPrimary.address),
        'the broker moved to leads it, and the old primary left its replicas',
        10_000,
      );
      await until(
        async () => fs.existsSync(path.join(oldPrimary.dataDir, 'rm-0')),
        (exists) => !exists,
        'the old primary removed its copy',
        10_000,
      );
      await oracle.acknowledgedMore(200, 30_000);

      const drained = await cli('brokers', 'drain', outsider.name);
      assert.match(
        drained.output,
        new RegExp(`${outsider.name}: \\d+ of \\d+ partition\\(s\\) off it`),
        drained.output,
      );
      await until(
        () => route('rm'),
        (r) => r.primary !== '' && r.primary !== outsider.address && !r.replicas.includes(outsider.address),
        `rm-0 off ${outsider.name}`,
        10_000,
      );
      await oracle.acknowledgedMore(200, 30_000);
    } finally {
      await oracle.stop();
    }
    oracle.check(await finalLog('rm', 1));
  });

  test('no in-sync replica alive: the partition waits without a primary until partitions elect --unclean forces one', async () => {
    await createReplicated('ru');
    const oracle = new ReplicationOracle('ru', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(2);
    const primary = await primaryOf('ru');
    const [a, b] = kit.brokers.filter((x) => x !== primary) as [KitBroker, KitBroker];
    try {
      await oracle.acknowledgedMore(50, 30_000);
      await Promise.all([a.kill(), b.kill()]);
      await until(
        () => route('ru'),
        (r) => r.primary === primary.address && r.replicas.length === 0,
        'the in-sync set shrunk to the primary alone',
        LEASE_MS + 10_000,
      );
    } finally {
      await oracle.stop();
    }
    await primary.kill();
    await a.start();
    const client = await connect(a.address);
    try {
      await until(
        () => metric(a, /^booblik_cluster_members (\d+)$/m),
        (members) => members === 1,
        "the old primary's lease gone: a alone is a member",
        LEASE_MS + 10_000,
      );
      // a is live but was out of sync: it is never promoted by itself.
      await until(
        async () =>
          (await client.produce({ topic: 'ru', partition: 0, ack: 1, records: [Buffer.from('x')] }))
            .errorCode,
        (code) => code === ErrorCode.NO_PRIMARY,
        'PRODUCE refused NO_PRIMARY',
        LEASE_MS + 10_000,
      );
      const cli = async (...args: string[]) => {
        const p = startCli(['partitions', 'elect', 'ru', '0', a.name, ...args, '--broker', a.address]);
        return { code: await p.exitCode(30_000), output: p.output() };
      };
      const refused = await cli();
      assert.equal(refused.code, 2, `without --unclean it is a usage error: ${refused.output}`);
      const elected = await cli('--unclean');
      assert.equal(elected.code, 0, elected.output);
      // The others return as replicas of a's log (what only they held is cut, on purpose); with
      // minInSync 2, a serves once one of them is in sync with it.
      await Promise.all([primary.start(), b.start()]);
      await until(
        () => route('ru'),
        (r) => r.primary === a.address && r.replicas.length >= 1,
        'a primary, in sync with another',
        20_000,
      ).catch((error) => {
        dumpLogs();
        throw error;
      });
      const answer = await client.produce({
        topic: 'ru',
        partition: 0,
        ack: 1,
        records: [Buffer.from('after')],
      });
      assert.equal(answer.errorCode, ErrorCode.NONE, 'writes go on');
    } finally {
      client.close();
    }
    await sameLogsEverywhere('ru');
  });

  test('two of three killed: writes are refused, nothing acknowledged is lost, and they resume when one returns', async () => {
    await createReplicated('r4');
    const oracle = new ReplicationOracle('r4', 0, () => up().map((b) => b.address), random);
    oracle.startProducers(3);
    try {
      await oracle.acknowledgedMore(50, 30_000);
      const primary = await primaryOf('r4');
      const others = kit.brokers.filter((b) => b !== primary);
      await Promise.all(others.map((b) => b.kill()));
      const before = oracle.acknowledged.length;
      await until(
        async () => oracle.refusals.get('code 14') ?? 0,
        (n) => n > 0,
        'a PRODUCE refused NOT_ENOUGH_REPLICAS',
        LAG_MAX_MS + 10_000,
      );
      const acceptedAfterLoss = oracle.acknowledged.length - before;
      await others[0]!.start();
      await oracle.acknowledgedMore(50, 30_000).catch((error) => {
        dumpLogs();
        throw error;
      });
      await others[1]!.start();
      assert.ok(acceptedAfterLoss < 20, `${acceptedAfterLoss} acknowledged after two of three died`);
    } finally {
      await oracle.stop();
    }
    oracle.check(await finalLog('r4'));
    await sameLogsEverywhere('r4');
  });
});
