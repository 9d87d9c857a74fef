import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  AckPolicy,
  ApiKey,
  ErrorCode,
  encodeErrorResponse,
  encodeProduceResponse,
  OFFSET_UNKNOWN,
  produceRecordPayloads,
  type Request,
} from '@booblik/protocol';
import { readVectors } from '@booblik/protocol/testing';
import {
  BrokerError,
  ConnectionClosedError,
  InvalidArgumentError,
  ProducerClosedError,
  RequestTooLargeError,
} from './errors.js';
import { Producer } from './producer.js';
import { FakeBroker, type ReceivedRequest } from './test-support/fake-broker.js';
import { ManualClock } from './test-support/manual-clock.js';
import { MemoryLog } from './test-support/memory-log.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

async function start(log?: MemoryLog): Promise<FakeBroker> {
  const broker = await FakeBroker.start(log?.handle);
  brokers.push(broker);
  return broker;
}

type Produce = Extract<Request, { apiKey: typeof ApiKey.PRODUCE }>;

function produced(got: ReceivedRequest): { partition: number; payloads: string[] } {
  assert.equal(got.request.apiKey, ApiKey.PRODUCE);
  const body = (got.request as Produce).body;
  return { partition: body.partition, payloads: produceRecordPayloads(body).map((p) => p.toString()) };
}

function answer(got: ReceivedRequest, baseOffset: number): void {
  const count = (got.request as Produce).body.recordCount;
  got.reply(
    encodeProduceResponse(got.request.correlationId, { baseOffset, logEndOffset: baseOffset + count }),
  );
}

describe('producer', () => {
  it('loses nothing across linger windows: every record lands once, in send order per partition', async () => {
    const log = new MemoryLog({ t: 2 });
    const clock = new ManualClock();
    const producer = await Producer.connect((await start(log)).address, {
      clock,
      lingerMs: 5,
      maxInFlight: 3,
    });
    const sends: Promise<number>[] = [];
    const expected: string[][] = [[], []];
    for (let window = 0; window < 6; window++) {
      for (let i = 0; i < 37; i++) {
        const partition = (window + i) % 2;
        expected[partition]!.push(`w${window}-${i}`);
        sends.push(producer.send('t', `w${window}-${i}`, { partition }));
      }
      clock.advance(5);
    }
    const offsets = await Promise.all(sends);
    for (const partition of [0, 1]) {
      assert.deepEqual(
        log.records('t', partition).map((r) => r.toString()),
        expected[partition],
      );
    }
    // Each record's promise carries its own offset.
    const seen = [0, 0];
    sends.forEach((_, i) => {
      const partition = (Math.floor(i / 37) + (i % 37)) % 2;
      assert.equal(offsets[i], seen[partition]!++);
    });
    await producer.close();
  });

  it('a full batch goes at once, without waiting out the linger', async () => {
    const broker = await start();
    const clock = new ManualClock();
    const producer = await Producer.connect(broker.address, { clock, lingerMs: 60_000, maxBatchRecords: 3 });
    const sends = ['a', 'b', 'c'].map((r) => producer.send('t', r, { partition: 0 }));
    const got = await broker.nextRequest();
    assert.deepEqual(produced(got), { partition: 0, payloads: ['a', 'b', 'c'] });
    answer(got, 10);
    assert.deepEqual(await Promise.all(sends), [10, 11, 12]);
    const fourth = producer.send('t', 'd', { partition: 0 });
    assert.equal(producer.inFlightRequests, 0, 'a fourth record waits for its own batch to fill or linger');
    assert.equal(producer.queuedRecords, 1);
    const closing = producer.close();
    answer(await broker.nextRequest(), 13);
    assert.equal(await fourth, 13);
    await closing;
  });

  it('a partial batch goes when its linger ends, not before', async () => {
    const broker = await start();
    const clock = new ManualClock();
    const producer = await Producer.connect(broker.address, { clock, lingerMs: 5 });
    const sent = producer.send('t', 'lonely', { partition: 1 });
    clock.advance(4);
    assert.equal(producer.inFlightRequests, 0);
    clock.advance(1);
    assert.equal(producer.inFlightRequests, 1);
    const got = await broker.nextRequest();
    assert.deepEqual(produced(got), { partition: 1, payloads: ['lonely'] });
    answer(got, 7);
    assert.equal(await sent, 7);
    await producer.close();
  });

  it('close flushes: records still lingering are sent and answered before close resolves', async () => {
    const log = new MemoryLog({ t: 1 });
    const clock = new ManualClock();
    const producer = await Producer.connect((await start(log)).address, { clock, lingerMs: 60_000 });
    const sends = [1, 2, 3, 4, 5].map((i) => producer.send('t', `r${i}`, { partition: 0 }));
    await producer.close();
    assert.deepEqual(await Promise.all(sends), [0, 1, 2, 3, 4]);
    assert.equal(log.records('t', 0).length, 5);
    assert.equal(producer.state, 'closed');
    await assert.rejects(producer.send('t', 'late', { partition: 0 }), ProducerClosedError);
  });

  it('flush sends every open batch now and resolves once every earlier send settled', async () => {
    const log = new MemoryLog({ t: 3 });
    const clock = new ManualClock();
    const producer = await Producer.connect((await start(log)).address, { clock, lingerMs: 60_000 });
    let settled = 0;
    for (let i = 0; i < 9; i++) void producer.send('t', `r${i}`, { partition: i % 3 }).then(() => settled++);
    await producer.flush();
    // Promise callbacks attached before flush() run before flush's own continuation.
    await Promise.resolve();
    assert.equal(settled, 9);
    await producer.close();
  });

  it('backpressure: send waits when the queue is full and joins a batch once an answer frees room', async () => {
    const broker = await start();
    const producer = await Producer.connect(broker.address, {
      maxQueuedRecords: 2,
      maxBatchRecords: 1,
      maxInFlightPerPartition: 2,
    });
    const a = producer.send('t', 'a', { partition: 0 });
    const b = producer.send('t', 'b', { partition: 0 });
    const c = producer.send('t', 'c', { partition: 0 });
    let ready = false;
    const readiness = producer.ready().then(() => {
      ready = true;
    });
    assert.equal(producer.queuedRecords, 2);
    assert.equal(producer.waitingSends, 1, 'the third record is not in any batch');
    const first = await broker.nextRequest();
    const second = await broker.nextRequest();
    assert.deepEqual([produced(first).payloads, produced(second).payloads], [['a'], ['b']]);
    assert.equal(ready, false);
    answer(first, 0);
    assert.equal(await a, 0);
    const third = await broker.nextRequest();
    assert.deepEqual(produced(third).payloads, ['c']);
    answer(second, 1);
    answer(third, 2);
    assert.deepEqual(await Promise.all([b, c]), [1, 2]);
    await readiness;
    assert.equal(ready, true);
    await producer.close();
  });

  it('a failed request fails exactly the promises of its batch; other batches and later sends go on', async () => {
    const broker = await start();
    const producer = await Producer.connect(broker.address, { maxBatchRecords: 2 });
    const p0 = [producer.send('t', 'a', { partition: 0 }), producer.send('t', 'b', { partition: 0 })];
    const p1 = [producer.send('t', 'c', { partition: 1 }), producer.send('t', 'd', { partition: 1 })];
    const r0 = await broker.nextRequest();
    const r1 = await broker.nextRequest();
    answer(r0, 100);
    r1.reply(encodeErrorResponse(r1.request.correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    assert.deepEqual(await Promise.all(p0), [100, 101]);
    for (const p of p1) {
      await assert.rejects(
        p,
        (e: unknown) => e instanceof BrokerError && e.codeName === 'UNKNOWN_TOPIC_OR_PARTITION',
      );
    }
    const later = producer.send('t', 'e', { partition: 0 });
    const r2 = await broker.nextRequest();
    answer(r2, 102);
    assert.equal(await later, 102);
    await producer.close();
  });

  it('a broker failure reaches every waiting caller: in flight, sealed, lingering and queued', async () => {
    const broker = await start();
    const clock = new ManualClock();
    const producer = await Producer.connect(broker.address, {
      clock,
      lingerMs: 60_000,
      maxBatchRecords: 2,
      maxInFlight: 1,
      maxQueuedRecords: 5,
    });
    const sends = [
      producer.send('t', 'in flight 1', { partition: 0 }),
      producer.send('t', 'in flight 2', { partition: 0 }),
      producer.send('t', 'sealed 1', { partition: 1 }),
      producer.send('t', 'sealed 2', { partition: 1 }),
      producer.send('t', 'lingering', { partition: 2 }),
      producer.send('t', 'queued', { partition: 2 }),
    ];
    assert.equal(producer.waitingSends, 1);
    await broker.nextRequest();
    broker.dropConnections();
    for (const s of sends) await assert.rejects(s, ConnectionClosedError);
    assert.equal(producer.state, 'failed');
    await assert.rejects(producer.send('t', 'after', { partition: 0 }), (e: unknown) => {
      return e instanceof ProducerClosedError && e.cause instanceof ConnectionClosedError;
    });
    assert.equal(producer.queuedRecords, 0);
    await producer.close();
  });

  it('ack NONE: every send resolves with OFFSET_UNKNOWN, and the records still arrive', async () => {
    const broker = await start();
    const clock = new ManualClock();
    const producer = await Producer.connect(broker.address, { clock, ack: AckPolicy.NONE, lingerMs: 60_000 });
    const sends = ['x', 'y'].map((r) => producer.send('t', r, { partition: 0 }));
    await producer.flush();
    assert.deepEqual(await Promise.all(sends), [OFFSET_UNKNOWN, OFFSET_UNKNOWN]);
    const got = await broker.nextRequest();
    assert.equal((got.request as Produce).body.ack, AckPolicy.NONE);
    assert.deepEqual(produced(got).payloads, ['x', 'y']);
    await producer.close();
  });

  it('keyed sends land in the partitions of the golden vectors; keyless sends rotate', async () => {
    const log = new MemoryLog({ conformance: 3 });
    const producer = await Producer.connect((await start(log)).address, { lingerMs: 1 });
    const vectors = readVectors('partitioner-fnv1a.tsv');
    const offsets = await Promise.all(
      vectors.map((v) => producer.send('conformance', v.name!, { key: Buffer.from(v.keyHex!, 'hex') })),
    );
    vectors.forEach((v, i) => {
      assert.equal(log.records('conformance', Number(v.p3))[offsets[i]!]?.toString(), v.name, v.name);
    });
    const before = [0, 1, 2].map((p) => log.records('conformance', p).length);
    await Promise.all([0, 1, 2].map((i) => producer.send('conformance', `rr${i}`)));
    assert.deepEqual(
      [0, 1, 2].map((p) => log.records('conformance', p).length - before[p]!),
      [1, 1, 1],
    );
    await producer.close();
  });

  it('an unknown topic fails only the sends that needed its partitions', async () => {
    const log = new MemoryLog({ t: 1 });
    const producer = await Producer.connect((await start(log)).address, { lingerMs: 1 });
    const bad = producer.send('nope', 'x');
    const good = producer.send('t', 'y');
    await assert.rejects(
      bad,
      (e: unknown) => e instanceof BrokerError && e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    );
    assert.equal(await good, 0);
    await producer.close();
  });

  it("an empty record is refused at send, naming the problem; 'a' and 'c' around it still land", async () => {
    const log = new MemoryLog({ t: 1 });
    const producer = await Producer.connect((await start(log)).address, { lingerMs: 1 });
    const a = producer.send('t', 'a');
    const empty = producer.send('t', '');
    const c = producer.send('t', 'c');
    await assert.rejects(empty, (e: unknown) => {
      assert.ok(e instanceof InvalidArgumentError, String(e));
      assert.match(e.message, /payload of a record for t: empty, expected at least 1 byte/);
      return true;
    });
    assert.deepEqual([await a, await c], [0, 1]);
    assert.deepEqual(
      log.records('t', 0).map((r) => r.toString()),
      ['a', 'c'],
    );
    await producer.close();
  });

  it('an unknown topic is named in the error, not only in the request', async () => {
    const producer = await Producer.connect((await start(new MemoryLog({ t: 1 }))).address);
    await assert.rejects(producer.send('nope', 'x'), (e: unknown) => {
      assert.ok(e instanceof BrokerError);
      assert.match(e.message, /UNKNOWN_TOPIC_OR_PARTITION \(topic nope does not exist\)/);
      assert.deepEqual(e.topics, ['nope']);
      return true;
    });
    await producer.close();
  });

  it('a record too large for any frame is refused at once, without costing the connection', async () => {
    const log = new MemoryLog({ t: 1 });
    const producer = await Producer.connect((await start(log)).address, { lingerMs: 1 });
    await assert.rejects(
      producer.send('t', Buffer.alloc(8 * 1024 * 1024), { partition: 0 }),
      RequestTooLargeError,
    );
    assert.equal(await producer.send('t', 'fits', { partition: 0 }), 0);
    await producer.close();
  });

  it('batches are cut before they outgrow a frame', async () => {
    const broker = await start();
    const clock = new ManualClock();
    const producer = await Producer.connect(broker.address, { clock, lingerMs: 60_000, maxInFlight: 5 });
    const big = Buffer.alloc(3 * 1024 * 1024);
    const sends = [0, 1, 2].map(() => producer.send('t', big, { partition: 0 }));
    // Two 3 MiB records fit in 8 MiB, a third does not: the first batch is sealed when it arrives.
    const first = await broker.nextRequest();
    assert.equal((first.request as Produce).body.recordCount, 2);
    answer(first, 0);
    const flushing = producer.flush();
    const second = await broker.nextRequest();
    assert.equal((second.request as Produce).body.recordCount, 1);
    answer(second, 2);
    assert.deepEqual(await Promise.all(sends), [0, 1, 2]);
    await flushing;
    await producer.close();
  });
});
