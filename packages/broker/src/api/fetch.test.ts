import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  ErrorCode,
  encodeFetchRequestV1,
  frameBytesMax,
  NO_EPOCH,
  responseHeaderBytes,
} from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { waitUntil, within } from '@booblik/testkit';
import { fetchPayloadBytesMax } from '../limits.js';
import { fetched, fetchedV5, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';
import type { BrokerTime } from '../time.js';

const rec = (s: string) => Buffer.from(s);

async function setup(t: import('node:test').TestContext, overrides = {}, time?: BrokerTime) {
  const b = await startBroker(t, overrides, time);
  const consumer = await RawClient.connect(b.port);
  const producer = await RawClient.connect(b.port);
  t.after(() => {
    consumer.close();
    producer.close();
  });
  const produce = (...records: string[]) =>
    producer.produce({ topic: 't', partition: 0, ack: AckPolicy.WRITTEN, records: records.map(rec) });
  return { ...b, consumer, producer, produce };
}

describe('FETCH', () => {
  it("a held FETCH is answered empty when its wait ends on the broker's clock, not a moment before", async (t) => {
    const clock = new ManualClock();
    const { consumer, producer, produce, broker } = await setup(t, {}, { clock, wallNowMs: Date.now });
    await produce('a');
    let answered = false;
    const pending = consumer
      .fetch({ topic: 't', partition: 0, fetchOffset: 1, maxWaitMs: 30_000 })
      .finally(() => {
        answered = true;
      });
    await waitUntil(() => broker.metrics.heldFetches === 1, 'the fetch to be held');
    clock.advance(29_999);
    // A round trip on another connection: the broker's loop has turned since the advance.
    await producer.metadata('t');
    assert.equal(answered, false, 'answered before its 30 s had passed on the clock');
    clock.advance(1);
    // At once: a wait on real time would hold it for 30 s.
    const answer = await within(pending, 5000, 'the answer once the clock reached the wait');
    assert.equal(answer.errorCode, 0);
    assert.deepEqual(fetched(answer, 1).records, []);
    assert.equal(broker.metrics.heldFetches, 0);
  });

  it('at the high watermark is empty, not an error', async (t) => {
    const { consumer, produce } = await setup(t);
    await produce('a', 'b');
    const answer = await consumer.fetch({ topic: 't', partition: 0, fetchOffset: 2 });
    assert.equal(answer.errorCode, 0);
    assert.deepEqual(fetched(answer, 2), { highWatermark: 2, records: [], payload: Buffer.alloc(0) });
  });

  it('past the end is OFFSET_OUT_OF_RANGE, checked after the wait', async (t) => {
    const { consumer, produce, broker } = await setup(t);
    await produce('a');
    let answered = false;
    const pending = consumer
      .fetch({ topic: 't', partition: 0, fetchOffset: 1001, maxWaitMs: 1000 })
      .finally(() => {
        answered = true;
      });
    await waitUntil(() => broker.metrics.heldFetches === 1 || answered, 'the fetch to be held or answered');
    assert.equal(answered, false, 'refused at once instead of after its wait');
    assert.equal((await pending).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  });

  it('a long poll is woken by a write at once, long before its wait ends', async (t) => {
    const { consumer, produce } = await setup(t);
    const started = performance.now();
    const pending = consumer.fetch({ topic: 't', partition: 0, fetchOffset: 0, maxWaitMs: 30_000 });
    await produce('wake');
    const answer = await pending;
    assert.deepEqual(fetched(answer, 0).records, ['wake']);
    assert.ok(performance.now() - started < 15_000, 'answered by the write, not by the 30 s deadline');
  });

  it('a long poll that nothing wakes expires as an empty success', async (t) => {
    const { consumer } = await setup(t);
    const answer = await consumer.fetch({ topic: 't', partition: 0, fetchOffset: 0, maxWaitMs: 100 });
    assert.equal(answer.errorCode, 0);
    assert.deepEqual(fetched(answer, 0).records, []);
  });

  it('minBytes holds the answer until that many bytes are there', async (t) => {
    const { consumer, produce } = await setup(t);
    const pending = consumer.fetch({
      topic: 't',
      partition: 0,
      fetchOffset: 0,
      maxWaitMs: 30_000,
      minBytes: 30,
    });
    await produce('12345678'); // 16 bytes stored: not enough, so the fetch must not answer with this alone
    await produce('abcdefgh'); // 32 bytes: enough
    assert.deepEqual(fetched(await pending, 0).records, ['12345678', 'abcdefgh']);
  });

  it('an offset just past the end, held, is answered as soon as a write makes it valid', async (t) => {
    const { consumer, produce } = await setup(t);
    await produce('a');
    const pending = consumer.fetch({ topic: 't', partition: 0, fetchOffset: 2, maxWaitMs: 30_000 });
    await produce('b', 'c');
    assert.deepEqual(fetched(await pending, 2).records, ['c']);
  });

  it('maxBytes cuts the payload at a byte, inside a record', async (t) => {
    const { consumer, produce } = await setup(t);
    await produce('aaaaaaaaaa', 'bbbbbbbbbb'); // 18 bytes each stored
    const answer = await consumer.fetch({ topic: 't', partition: 0, fetchOffset: 0, maxBytes: 25 });
    const read = fetched(answer, 0, 25);
    assert.equal(read.payload.length, 25);
    assert.deepEqual(read.records, ['aaaaaaaaaa']);
  });

  it('maxBytes beyond a frame is served as one frame of 8 MiB, and minBytes beyond it does not wait for the deadline', async (t) => {
    const { consumer, producer } = await setup(t);
    const record = Buffer.alloc(512 * 1024, 1);
    for (let i = 0; i < 3; i++) {
      await producer.produce({
        topic: 't',
        partition: 0,
        ack: AckPolicy.WRITTEN,
        records: Array(8).fill(record),
      });
    }
    const started = performance.now();
    for (const minBytes of [0, 9 << 20]) {
      const answer = await consumer.fetch({
        topic: 't',
        partition: 0,
        fetchOffset: 0,
        maxBytes: 2 ** 31 - 1,
        maxWaitMs: 30_000,
        minBytes,
      });
      assert.equal(answer.errorCode, 0);
      assert.ok(
        answer.body.length <= fetchPayloadBytesMax + 12,
        `a frame of ${answer.body.length + 6} bytes`,
      );
      assert.equal(fetched(answer, 0, 2 ** 31 - 1).records.length, 15, 'as many whole records as fit');
    }
    assert.ok(performance.now() - started < 15_000, 'answered with what was there, not at the deadline');
  });

  it('v1 has no wait: answered at once even when empty', async (t) => {
    const { consumer } = await setup(t);
    consumer.send(
      encodeFetchRequestV1(9, {
        topic: 't',
        partition: 0,
        fetchOffset: 0,
        maxBytes: 100,
        maxWaitMs: 0,
        minBytes: 0,
      }),
    );
    const answer = await consumer.expect(9);
    assert.deepEqual(fetched(answer, 0).records, []);
  });

  it('unknown topic is refused at once even when a wait was asked', async (t) => {
    const { consumer } = await setup(t);
    const answer = await consumer.fetch({ topic: 'nope', partition: 0, fetchOffset: 0, maxWaitMs: 60_000 });
    assert.equal(answer.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('below the log start (after retention) is OFFSET_OUT_OF_RANGE at once, and the new start works', async (t) => {
    const { consumer, produce, broker } = await setup(t, { segmentBytesMax: 40, retentionBytes: 0 });
    for (const r of ['aaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccc'])
      await produce(r);
    broker.partitions.enforceRetention();
    const gone = await consumer.fetch({ topic: 't', partition: 0, fetchOffset: 0, maxWaitMs: 60_000 });
    assert.equal(gone.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    const start = broker.partitions.get('t', 0)!.logStartOffset;
    assert.deepEqual(
      fetched(await consumer.fetch({ topic: 't', partition: 0, fetchOffset: start }), start).records,
      ['cccccccccccccccccccc'],
    );
  });

  it('shutdown answers a held fetch with its empty success before closing', async (t) => {
    const { consumer, broker } = await setup(t);
    const pending = consumer.fetch({ topic: 't', partition: 0, fetchOffset: 0, maxWaitMs: 60_000 });
    await waitUntil(() => broker.metrics.heldFetches === 1, 'the fetch to be held');
    void broker.close();
    const answer = await pending;
    assert.equal(answer.errorCode, 0);
    assert.deepEqual(fetched(answer, 0).records, []);
  });
});

describe('FETCH v5', () => {
  it('a partition never restored is epoch 0 to its end, and a long poll woken by a write answers with it', async (t) => {
    const { consumer, produce } = await setup(t);
    const pending = consumer.fetchV5({
      topic: 't',
      partition: 0,
      fetchOffset: 0,
      maxWaitMs: 30_000,
      lastEpoch: NO_EPOCH,
    });
    await produce('wake');
    const answer = fetchedV5(await pending, 0);
    assert.deepEqual(answer, { highWatermark: 1, epoch: 0, epochEndOffset: -1, records: ['wake'] });
  });

  it('an epoch this partition never had (newer than its latest) is not judged: the records are served', async (t) => {
    const { consumer, produce } = await setup(t);
    await produce('a', 'b');
    const answer = await consumer.fetchV5({ topic: 't', partition: 0, fetchOffset: 1, lastEpoch: 7 });
    assert.equal(answer.errorCode, ErrorCode.NONE);
    assert.deepEqual(fetchedV5(answer, 1).records, ['b']);
  });

  it('maxBytes beyond a frame is served as one frame of 8 MiB with the epoch fields in it', async (t) => {
    const { consumer, producer } = await setup(t);
    // Two records whose 8,388,580 stored bytes fit a v2 answer's frame, but not a v5 answer's.
    const record = Buffer.alloc(4_194_282, 1);
    for (let i = 0; i < 2; i++) {
      const sent = await producer.produce({
        topic: 't',
        partition: 0,
        ack: AckPolicy.WRITTEN,
        records: [record],
      });
      assert.equal(sent.errorCode, 0);
    }
    const answer = await consumer.fetchV5({
      topic: 't',
      partition: 0,
      fetchOffset: 0,
      maxBytes: 2 ** 31 - 1,
      lastEpoch: NO_EPOCH,
    });
    assert.equal(answer.errorCode, 0);
    assert.ok(
      answer.body.length + responseHeaderBytes <= frameBytesMax,
      `a frame of ${answer.body.length + 6} bytes`,
    );
    assert.equal(
      fetchedV5(answer, 0, 2 ** 31 - 1).records.length,
      1,
      'the second is cut: it is fetched again',
    );
  });
});
