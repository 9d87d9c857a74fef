import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  ErrorCode,
  encodeFetchRequestV2,
  type TopicChange,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { waitUntil } from '@booblik/testkit';
import { fetched, metadataOf, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

const create = (name: string, partitions: number): TopicChange => ({
  op: 'upsert',
  spec: topicSpecWithDefaults({ name, partitions }),
});
const remove = (name: string): TopicChange => ({ op: 'delete', name, expectedRevision: -1 });

describe('deleting a topic', () => {
  it('under 4 producers and 100 held fetches: every request answered, no connection lost, files gone', async (t) => {
    const { port, broker, dataDir } = await startBroker(t, { topics: [{ name: 'doomed', partitions: 2 }] });
    const admin = await RawClient.connect(port);
    const fetchers = await Promise.all(Array.from({ length: 10 }, () => RawClient.connect(port)));
    const producers = await Promise.all(Array.from({ length: 4 }, () => RawClient.connect(port)));
    const all = [admin, ...fetchers, ...producers];
    t.after(() => {
      for (const c of all) c.close();
    });

    // 10 held fetches per connection, pipelined, far past the end so no write wakes them.
    const held: Promise<number>[] = [];
    for (const [i, c] of fetchers.entries()) {
      for (let k = 0; k < 10; k++) {
        const id = c.id();
        c.send(
          encodeFetchRequestV2(id, {
            topic: 'doomed',
            partition: (i + k) % 2,
            fetchOffset: 1e12,
            maxBytes: 1024,
            maxWaitMs: 60_000,
            minBytes: 0,
          }),
        );
        held.push(c.expect(id).then((f) => f.errorCode));
      }
    }
    await waitUntil(() => broker.metrics.heldFetches === 100, '100 held fetches');

    const produceCodes: number[] = [];
    let stop = false;
    const producing = producers.map(async (c, i) => {
      let sent = 0;
      while (!stop || sent === 0) {
        const f = await c.produce({
          topic: 'doomed',
          partition: i % 2,
          ack: i < 2 ? AckPolicy.WRITTEN : AckPolicy.FORCED,
          records: [Buffer.alloc(512, i)],
        });
        produceCodes.push(f.errorCode);
        sent++;
        if (f.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return sent;
      }
      return sent;
    });
    await waitUntil(() => produceCodes.length >= 40, 'producers under way');
    assert.equal((await admin.apply([remove('doomed')])).errorCode, ErrorCode.NONE);
    stop = true;

    const heldCodes = await Promise.all(held);
    assert.deepEqual(
      new Set(heldCodes),
      new Set([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]),
      'every held fetch answered',
    );
    await Promise.all(producing);
    assert.deepEqual(
      new Set(produceCodes),
      new Set([ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]),
      'producers got answers, then UNKNOWN_TOPIC_OR_PARTITION',
    );
    for (const c of all) assert.equal(c.closed, false, 'no connection was closed');
    assert.equal((await admin.metadata()).errorCode, ErrorCode.NONE, 'the broker still answers');
    await waitUntil(
      () => !fs.existsSync(path.join(dataDir, 'doomed-0')) && !fs.existsSync(path.join(dataDir, 'doomed-1')),
      'the partition directories to be removed',
    );
  });

  it('a topic created again under the same name starts empty, even right behind its deletion', async (t) => {
    const { port } = await startBroker(t, { topics: [{ name: 'again', partitions: 1 }] });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    await c.produce({ topic: 'again', partition: 0, ack: AckPolicy.FORCED, records: [Buffer.from('old')] });
    // Pipelined: the create is applied while the old files may still be going.
    const [deleted, created] = await Promise.all([c.apply([remove('again')]), c.apply([create('again', 2)])]);
    assert.equal(deleted.errorCode, ErrorCode.NONE);
    assert.equal(created.errorCode, ErrorCode.NONE);
    const meta = metadataOf(await c.metadata('again'))[0]!;
    assert.deepEqual(
      meta.partitions.map((p) => [p.logStartOffset, p.highWatermark]),
      [
        [0, 0],
        [0, 0],
      ],
    );
    assert.deepEqual(fetched(await c.fetch({ topic: 'again', partition: 0, fetchOffset: 0 }), 0).records, []);
    const p = await c.produce({
      topic: 'again',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('new')],
    });
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.deepEqual(fetched(await c.fetch({ topic: 'again', partition: 0, fetchOffset: 0 }), 0).records, [
      'new',
    ]);
  });

  it('files a crash left behind a deletion do not come back when the name is created again', async (t) => {
    const first = await startBroker(t, { topics: [{ name: 'keep', partitions: 1 }] });
    const c = await RawClient.connect(first.port);
    await c.apply([create('ghost', 1)]);
    await c.produce({ topic: 'ghost', partition: 0, ack: AckPolicy.FORCED, records: [Buffer.from('stale')] });
    c.close();
    await first.broker.close();
    // As if the broker died after storing the deletion but before removing the files.
    const specFile = path.join(first.dataDir, 'topics.json');
    const stored = JSON.parse(fs.readFileSync(specFile, 'utf8'));
    stored.topics = stored.topics.filter((s: { name: string }) => s.name !== 'ghost');
    stored.revision += 1;
    fs.writeFileSync(specFile, JSON.stringify(stored));
    const second = await startBroker(t, {
      dataDir: first.dataDir,
      topics: [{ name: 'keep', partitions: 1 }],
    });
    const c2 = await RawClient.connect(second.port);
    t.after(() => c2.close());
    assert.equal((await c2.apply([create('ghost', 1)])).errorCode, ErrorCode.NONE);
    assert.equal(metadataOf(await c2.metadata('ghost'))[0]!.partitions[0]!.highWatermark, 0);
  });
});
