import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, ErrorCode, encodeProduceResponse, type Request } from '@booblik/protocol';
import { readVectors } from '@booblik/protocol/testing';
import { Connection } from './connection.js';
import { BrokerError, InvalidArgumentError } from './errors.js';
import { FakeBroker } from './test-support/fake-broker.js';
import { MemoryLog } from './test-support/memory-log.js';
import { Topic } from './topic.js';

const vectors = readVectors('partitioner-fnv1a.tsv');
const counts = [1, 2, 3, 4, 7, 16, 64, 1000];
const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

/** A topic handle that never talks to a broker: only the partitioner is exercised. */
function offline(partitions: number[]): Topic {
  return new Topic(undefined as unknown as Connection, 't', partitions);
}

describe('topic', () => {
  it('routing by key matches every golden vector for every partition count', () => {
    assert.ok(vectors.length >= 10);
    for (const n of counts) {
      const topic = offline(Array.from({ length: n }, (_, i) => i));
      for (const v of vectors) {
        assert.equal(
          topic.partitionFor(Buffer.from(v.keyHex!, 'hex')),
          Number(v[`p${n}`]),
          `${v.name} p${n}`,
        );
      }
    }
  });

  it('the partitioner indexes partitions sorted by id, not the ids themselves', () => {
    const topic = offline([10, 20, 30]);
    for (const v of vectors) {
      assert.equal(topic.partitionFor(Buffer.from(v.keyHex!, 'hex')), [10, 20, 30][Number(v.p3)]);
    }
  });

  it('a string key is hashed as its UTF-8 bytes', () => {
    const cyrillic = vectors.find((v) => v.name === 'utf-8 cyrillic')!;
    const text = Buffer.from(cyrillic.keyHex!, 'hex').toString('utf8');
    assert.equal(offline([0, 1, 2]).partitionFor(text), Number(cyrillic.p3));
  });

  it('round-robin advances on every call with a null key: asking twice turns twice', () => {
    const topic = offline([0, 1, 2]);
    assert.deepEqual(
      [null, undefined, null, null, undefined, null, null].map((k) => topic.partitionFor(k)),
      [0, 1, 2, 0, 1, 2, 0],
    );
  });

  it('a keyed send lands in the partition the vectors name, and reports it with the offset', async () => {
    const log = new MemoryLog({ conformance: 3 });
    const broker = await FakeBroker.start(log.handle);
    brokers.push(broker);
    const conn = await Connection.connect(broker.address);
    const topic = await conn.topic('conformance');
    assert.deepEqual(topic.partitions, [0, 1, 2]);
    for (const v of vectors) {
      const key = Buffer.from(v.keyHex!, 'hex');
      const sent = await topic.send(`payload of ${v.name}`, { key });
      assert.equal(sent.partition, Number(v.p3), v.name);
      const stored = log.records('conformance', sent.partition);
      assert.equal(stored[sent.offset]!.toString(), `payload of ${v.name}`);
    }
    await conn.close();
  });

  it('partitions come from METADATA: the broker sees one METADATA for the topic, then PRODUCE', async () => {
    const broker = await FakeBroker.start();
    brokers.push(broker);
    const conn = await Connection.connect(broker.address);
    const log = new MemoryLog({ orders: 2 });
    const loading = conn.topic('orders');
    const m = await broker.nextRequest();
    assert.deepEqual(m.request.body, { topics: ['orders'] });
    m.reply((await log.handle(m))!);
    const topic = await loading;
    const sending = topic.send('x');
    const p = await broker.nextRequest();
    assert.equal(p.request.apiKey, ApiKey.PRODUCE);
    assert.equal((p.request as Extract<Request, { apiKey: 1 }>).body.partition, 0);
    p.reply(encodeProduceResponse(p.request.correlationId, { baseOffset: 3, logEndOffset: 4 }));
    assert.deepEqual(await sending, { partition: 0, offset: 3 });
    await conn.close();
  });

  it('an unknown topic is refused with UNKNOWN_TOPIC_OR_PARTITION, and the message names the topic', async () => {
    const broker = await FakeBroker.start(new MemoryLog({ orders: 1 }).handle);
    brokers.push(broker);
    const conn = await Connection.connect(broker.address);
    await assert.rejects(conn.topic('nope'), (e: unknown) => {
      assert.ok(e instanceof BrokerError && e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal(
        e.message,
        'METADATA nope refused: UNKNOWN_TOPIC_OR_PARTITION (topic nope does not exist)',
      );
      return true;
    });
    await conn.close();
  });

  it('a partition the topic lacks is named with its topic', async () => {
    const broker = await FakeBroker.start(new MemoryLog({ orders: 1 }).handle);
    brokers.push(broker);
    const conn = await Connection.connect(broker.address);
    await assert.rejects(
      conn.fetch({ topic: 'orders', partition: 5, offset: 0, maxBytes: 100 }),
      /\(topic orders does not exist, or has no partition 5\)/,
    );
    await conn.close();
  });

  it('an empty payload is refused before anything is sent', async () => {
    const broker = await FakeBroker.start(new MemoryLog({ orders: 1 }).handle);
    brokers.push(broker);
    const conn = await Connection.connect(broker.address);
    const topic = await conn.topic('orders');
    const before = broker.received.length;
    await assert.rejects(topic.send(''), InvalidArgumentError);
    assert.equal(broker.received.length, before, 'no request for an empty record');
    assert.equal((await topic.send('x')).offset, 0);
    await conn.close();
  });
});
