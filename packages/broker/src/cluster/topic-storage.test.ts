/**
 * A cluster's topics where the disk or the store says no: a store that does not answer (refused by
 * the broker taking the APPLY), partitions their broker cannot open (reported there, the rest
 * served), and deletions of topics with a store (a dry run, a plain delete, a purge).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  decodeInvalidArgument,
  decodeListFragmentsResponse,
  encodeListFragmentsRequest,
  encodeProduceRequest,
  errorName,
  FragmentLocation,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import {
  connect,
  createTopic,
  metadata,
  ok,
  primaries,
  produceV1,
  until,
} from '../test-support/cluster-wire.js';

describe("a cluster's topics on disks and stores that say no", () => {
  let kit: ClusterKit;

  before(async () => {
    kit = await startClusterKit({ brokers: 3, flags: ['--default.replication=1'] });
  });
  after(async () => {
    await kit?.cleanup();
  });

  const broker = (name: string): KitBroker => kit.brokers.find((b) => b.name === name)!;

  test('a topic on a store that does not exist is refused by the broker taking the APPLY, and no broker gets it', async () => {
    const missing = path.join(os.tmpdir(), `booblik-no-store-${process.pid}`, 'no', 'such', 'dir');
    const client = await connect(broker('b2').address);
    try {
      const spec = {
        ...topicSpecWithDefaults({ name: 'nostore', partitions: 1, revision: 0 }),
        storeUrl: `file://${missing}`,
      };
      const answer = await client.apply([{ op: 'upsert', spec }]);
      assert.equal(errorName(answer.errorCode), 'INVALID_ARGUMENT');
      assert.match(
        decodeInvalidArgument(answer.body).message,
        /changes\[0\]\.storeUrl: .* the directory .* does not exist/,
      );
      for (const b of kit.brokers) {
        const c = await connect(b.address);
        assert.equal(
          errorName((await c.metadata('nostore')).errorCode),
          'UNKNOWN_TOPIC_OR_PARTITION',
          b.name,
        );
        c.close();
      }
    } finally {
      client.close();
    }
  });

  test('partitions their brokers cannot open are reported there and refused with STORAGE_ERROR, through any broker; the rest is served', async () => {
    // A file where each broker would make each of split's directories: one partition per broker
    // (one per zone), the one of the broker taking the APPLY included, and none can be opened.
    for (const b of kit.brokers) {
      for (let p = 0; p < 3; p++) fs.writeFileSync(path.join(b.dataDir, `split-${p}`), 'not a directory');
    }
    const client = await connect(broker('b1').address);
    try {
      await createTopic(client, 'split', 3);
      const failed = (b: KitBroker) =>
        b.process!.lines.filter((l) => /ERROR partition split-\d: cannot be opened, not served/.test(l))
          .length;
      await until(
        async () => kit.brokers.map(failed),
        (n) => n.every((x) => x === 1),
        'each broker reported its own',
        10_000,
      );
      for (const via of kit.brokers) {
        const c = await connect(via.address);
        for (let p = 0; p < 3; p++) {
          const id = c.id();
          c.send(
            encodeProduceRequest(id, { topic: 'split', partition: p, ack: 1, records: [Buffer.from('x')] }),
          );
          assert.equal(
            errorName((await c.expect(id)).errorCode),
            'STORAGE_ERROR',
            `split-${p} through ${via.name}`,
          );
        }
        c.close();
        const text = await (await fetch(`http://127.0.0.1:${via.httpPort}/metrics`)).text();
        assert.match(text, /^booblik_partitions_failed 1$/m, via.name);
      }
      // The other topics are served, through every broker.
      for (const via of kit.brokers) {
        const c = await connect(via.address);
        assert.ok((await produceV1(c, 'default', 0, [`after-split via ${via.name}`])) >= 0);
        c.close();
      }
      assert.equal(
        (await client.apply([{ op: 'delete', name: 'split', expectedRevision: -1 }])).errorCode,
        0,
      );
    } finally {
      client.close();
      for (const b of kit.brokers) {
        for (let p = 0; p < 3; p++) fs.rmSync(path.join(b.dataDir, `split-${p}`), { force: true });
      }
    }
  });

  test('deleting topics with a store: a dry run changes nothing, a plain delete leaves the objects, a purge removes them from every copy', async () => {
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cluster-store-'));
    const client = await connect(broker('b1').address);
    const objectsOf = (topic: string) => {
      const dir = path.join(storeDir, topic, '0');
      return fs.existsSync(dir)
        ? fs
            .readdirSync(dir)
            .filter((n) => !n.startsWith('.'))
            .sort()
        : [];
    };
    const holders = (topic: string) =>
      kit.brokers.filter((b) => fs.existsSync(path.join(b.dataDir, `${topic}-0`)));
    try {
      for (const name of ['kept', 'purged']) {
        const spec = {
          ...topicSpecWithDefaults({ name, partitions: 1, revision: 0 }),
          storeUrl: `file://${storeDir}`,
          segmentBytes: 4096,
          replication: 2,
        };
        assert.equal(errorName((await client.apply([{ op: 'upsert', spec }])).errorCode), 'NONE');
        await until(
          () => primaries(client, name),
          (r) => r[0] !== '',
          `${name}-0 served`,
          10_000,
        );
        for (let i = 0; i < 10; i++) {
          await produceV1(
            client,
            name,
            0,
            Array.from({ length: 10 }, (_, k) => `${name}-${i}-${k}-${'x'.repeat(300)}`),
          );
        }
        // Every closed segment persisted, on the primary's word (LIST_FRAGMENTS): nothing uploads later.
        const primary = await connect((await primaries(client, name))[0]!);
        await until(
          async () => {
            const id = primary.id();
            primary.send(encodeListFragmentsRequest(id, { topic: name, partition: 0 }));
            const [p] = decodeListFragmentsResponse(ok(await primary.expect(id), 'LIST_FRAGMENTS'));
            const closed = p!.fragments.slice(0, -1);
            return closed.length >= 3 && closed.every((f) => f.location === FragmentLocation.BOTH);
          },
          (done) => done,
          `${name}: closed segments persisted`,
          30_000,
        );
        primary.close();
      }
      const kept = objectsOf('kept');
      const purged = objectsOf('purged');
      assert.ok(kept.length >= 4 && purged.length >= 4, 'segments and a manifest in the store');
      const purge = { op: 'delete' as const, name: 'purged', expectedRevision: -1, purgeStore: true };

      assert.equal(errorName((await client.apply([purge], true)).errorCode), 'NONE');
      assert.equal((await metadata(client, ['purged'])).topics.length, 1, 'the dry run deleted nothing');
      assert.deepEqual(objectsOf('purged'), purged, 'the dry run removed nothing from the store');

      const keptHolders = holders('kept');
      assert.equal(keptHolders.length, 2, 'kept-0 has two copies');
      assert.equal(
        errorName((await client.apply([{ op: 'delete', name: 'kept', expectedRevision: -1 }])).errorCode),
        'NONE',
      );
      await until(
        async () => holders('kept').length,
        (n) => n === 0,
        'kept-0 removed from every broker',
        10_000,
      );
      assert.deepEqual(objectsOf('kept'), kept, 'a plain delete leaves every object in the store');

      const purgedHolders = holders('purged');
      assert.equal(purgedHolders.length, 2, 'purged-0 has two copies');
      assert.equal(errorName((await client.apply([purge])).errorCode), 'NONE');
      const line =
        /topic purged: deleted with its store history: (\d+) object\(s\) of 1 partition\(s\) removed from store file:/;
      await until(
        async () => purgedHolders.map((b) => b.process!.lines.find((l) => line.test(l))),
        (found) => found.every((l) => l !== undefined),
        'every broker with a copy logged its purge',
        20_000,
      );
      assert.deepEqual(objectsOf('purged'), [], 'no object of the topic is left');
      const removed = purgedHolders.map((b) =>
        Number(line.exec(b.process!.lines.find((l) => line.test(l))!)![1]),
      );
      assert.ok(
        removed.reduce((a, b) => a + b, 0) >= purged.length,
        `between them the copies removed every object: ${removed}`,
      );
    } finally {
      if (!client.closed) client.close();
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  });
});
