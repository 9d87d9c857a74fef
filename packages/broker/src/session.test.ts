import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  ErrorCode,
  encodeFetchRequestV2,
  encodeMetadataRequest,
  encodeProduceRequest,
} from '@booblik/protocol';
import { waitUntil } from '@booblik/testkit';
import { connectionPendingWriteBytesMax } from './limits.js';
import { fetched, produced, RawClient } from './test-support/raw-client.js';
import { startBroker } from './test-support/start-broker.js';

function lengthPrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
}

describe('sessions', () => {
  it('1,000 pipelined requests are answered in order, each with its own correlationId', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const frames: Buffer[] = [];
    for (let i = 0; i < 1000; i++) {
      if (i % 3 === 0) frames.push(encodeMetadataRequest(10_000 + i, { topics: ['t'] }));
      else if (i % 3 === 1) {
        frames.push(
          encodeProduceRequest(10_000 + i, {
            topic: 't',
            partition: 0,
            ack: i % 2 ? 1 : 2,
            records: [Buffer.from(`r${i}`)],
          }),
        );
      } else {
        frames.push(
          encodeFetchRequestV2(10_000 + i, {
            topic: 't',
            partition: 0,
            fetchOffset: 0,
            maxBytes: 64,
            maxWaitMs: 0,
            minBytes: 0,
          }),
        );
      }
    }
    c.send(Buffer.concat(frames));
    let offset = 0;
    for (let i = 0; i < 1000; i++) {
      const answer = await c.expect(10_000 + i);
      assert.equal(answer.errorCode, 0);
      if (i % 3 === 1) assert.equal(produced(answer).baseOffset, offset++, 'produces land in request order');
    }
  });

  it('a frame delivered one byte at a time is answered', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const frame = encodeProduceRequest(42, {
      topic: 't',
      partition: 2,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('slow')],
    });
    for (const byte of frame) {
      c.send(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(produced(await c.expect(42)), { baseOffset: 0, logEndOffset: 1 });
  });

  it('a frame shorter than its header is CORRUPT_REQUEST with correlationId 0, and the connection stays', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    c.send(Buffer.concat([lengthPrefix(5), Buffer.from([0, 3, 0, 1, 0])]));
    const answer = await c.expect(0);
    assert.equal(answer.errorCode, ErrorCode.CORRUPT_REQUEST);
    assert.equal((await c.metadata('t')).errorCode, 0);
  });

  it('an unknown apiKey or version is UNSUPPORTED_VERSION, the id echoed, the connection kept', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const header = (key: number, version: number, id: number) => {
      const b = Buffer.alloc(12);
      b.writeInt32BE(8, 0);
      b.writeInt16BE(key, 4);
      b.writeInt16BE(version, 6);
      b.writeInt32BE(id, 8);
      return b;
    };
    c.send(Buffer.concat([header(99, 1, 5), header(2, 7, 6)]));
    assert.equal((await c.expect(5)).errorCode, ErrorCode.UNSUPPORTED_VERSION);
    assert.equal((await c.expect(6)).errorCode, ErrorCode.UNSUPPORTED_VERSION);
    assert.equal((await c.metadata()).errorCode, 0);
  });

  for (const length of [0, -1, 2 ** 31 - 1, 8 * 1024 * 1024 + 1]) {
    it(`frame length ${length} closes that connection only, without an answer`, async (t) => {
      const { port, broker } = await startBroker(t);
      const bystander = await RawClient.connect(port);
      const bad = await RawClient.connect(port);
      t.after(() => {
        bystander.close();
        bad.close();
      });
      bad.send(lengthPrefix(length));
      await bad.closedPromise;
      assert.equal(await bad.next(), null, 'nothing was answered');
      assert.equal((await bystander.metadata('t')).errorCode, 0, 'others are still served');
      assert.equal(broker.metrics.connectionsClosedInvalidLength, 1);
    });
  }

  it('an absurd frame length after pipelined requests: those requests are still answered, then the connection closes', async (t) => {
    const { port, broker } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const produce = encodeProduceRequest(1, {
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('taken before the bad length')],
    });
    // The PRODUCE is intact and goes into the log; its answer is owed even though the stream then breaks.
    c.send(Buffer.concat([produce, encodeMetadataRequest(2, { topics: ['t'] }), lengthPrefix(-1)]));
    assert.deepEqual(produced(await c.expect(1)), { baseOffset: 0, logEndOffset: 1 });
    assert.equal((await c.expect(2)).errorCode, 0);
    await c.closedPromise;
    assert.equal(await c.next(), null, 'nothing after the bad length is answered');
    assert.equal(broker.metrics.connectionsClosedInvalidLength, 1);
  });

  it('a client that disconnects mid-request costs nothing: half a frame, then gone', async (t) => {
    const { port, broker } = await startBroker(t);
    const quitter = await RawClient.connect(port);
    const frame = encodeProduceRequest(1, {
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('lost')],
    });
    quitter.send(frame.subarray(0, 10));
    await waitUntil(() => broker.metrics.connectionsOpen === 1, 'the connection to be open');
    quitter.close();
    await waitUntil(() => broker.metrics.connectionsOpen === 0, 'the broker to notice the disconnect');
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const read = fetched(await c.fetch({ topic: 't', partition: 0, fetchOffset: 0 }), 0);
    assert.deepEqual(read.records, [], 'the half frame wrote nothing');
  });

  it('a client that disconnects while its long fetch is held releases it', async (t) => {
    const { port, broker } = await startBroker(t);
    const c = await RawClient.connect(port);
    void c.fetch({ topic: 't', partition: 0, fetchOffset: 0, maxWaitMs: 60_000 }).catch(() => undefined);
    await waitUntil(() => broker.metrics.heldFetches === 1, 'the fetch to be held');
    c.close();
    await waitUntil(() => broker.metrics.heldFetches === 0, 'the held fetch to be released');
  });

  it('a client that never reads its answers stops being read, and others are still served', async (t) => {
    const { port, broker } = await startBroker(t, { maxInflightRequests: 64 });
    const hog = await RawClient.connect(port);
    hog.socket.pause(); // never reads
    t.after(() => hog.close());
    const big = encodeFetchRequestV2(1, {
      topic: 't',
      partition: 0,
      fetchOffset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      minBytes: 0,
    });
    const producer = await RawClient.connect(port);
    t.after(() => producer.close());
    await producer.produce({
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.alloc(1 << 20, 1)],
    });
    // Each answer is 1 MiB: 400 of them would be 400 MiB if the broker kept reading.
    const burst = Buffer.concat(Array.from({ length: 400 }, () => big));
    hog.socket.write(burst);
    const rssBefore = process.memoryUsage().rss;
    await waitUntil(
      () => hog.socket.writableLength === 0 || hog.socket.writableNeedDrain,
      'the burst to be handed to the kernel',
    );
    assert.equal((await producer.metadata('t')).errorCode, 0, 'another client is still answered');
    const grown = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    assert.ok(
      grown < 100,
      `the broker held back instead of buffering answers (RSS grew ${grown.toFixed(0)} MiB)`,
    );
    assert.ok(broker.metrics.fetchBytesOut < 100 * 2 ** 20, 'it stopped producing answers nobody reads');
  });

  it('a client that never reads cannot make the broker take on more answers than the write budget, at the default in-flight limit', async (t) => {
    const { port, broker } = await startBroker(t);
    const hog = await RawClient.connect(port);
    hog.socket.pause(); // never reads
    t.after(() => hog.close());
    // 400 long polls, each for up to 1 MiB: once data lands, each is a 1 MiB answer nobody reads.
    const poll = (id: number) =>
      encodeFetchRequestV2(id, {
        topic: 't',
        partition: 0,
        fetchOffset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 60_000,
        minBytes: 0,
      });
    hog.send(Buffer.concat(Array.from({ length: 400 }, (_, i) => poll(i + 1))));
    await waitUntil(() => broker.metrics.heldFetches > 0, 'the first polls to be held');
    const other = await RawClient.connect(port);
    t.after(() => other.close());
    assert.equal((await other.metadata('t')).errorCode, 0, 'the broker has read what the hog sent');
    assert.ok(
      broker.metrics.heldFetches <= 17,
      `${broker.metrics.heldFetches} polls taken on: 16 x 1 MiB fill the 16 MiB budget, the 17th passes it`,
    );
    hog.close(); // now, not after the broker's shutdown has waited out its grace period for it
  });

  it('an ack NONE producer faster than the disk stops being read once its unwritten frames fill the budget', async (t) => {
    const { port, broker } = await startBroker(t);
    // A disk that does not finish: every append stays pending, as behind a very slow fdatasync.
    const partition = broker.partitions.get('t', 0)!;
    let appends = 0;
    let stuck = true;
    const pending: (() => void)[] = [];
    partition.appendTo = (_batch, _ack, waiter) => {
      appends++;
      if (!stuck) waiter.appended(0, 0);
      else pending.push(() => waiter.appended(0, 0));
    };
    const producer = await RawClient.connect(port);
    const frame = encodeProduceRequest(0, {
      topic: 't',
      partition: 0,
      ack: AckPolicy.NONE,
      records: [Buffer.alloc(256 * 1024 - 4)],
    });
    for (let i = 0; i < 256; i++) producer.send(frame); // 64 MiB, never answered
    // Frames are taken on until they pass the 16 MiB budget (the frame counts without its length prefix).
    const taken = Math.floor(connectionPendingWriteBytesMax / (frame.length - 4)) + 1;
    await waitUntil(() => appends >= taken, 'the budget to fill');
    const other = await RawClient.connect(port);
    t.after(() => other.close());
    for (let i = 0; i < 100; i++) assert.equal((await other.metadata('t')).errorCode, 0);
    assert.equal(appends, taken, 'no frame was taken on past the budget');
    // The disk catches up: the session reads on, and notices the producer is gone.
    stuck = false;
    for (const finish of pending.splice(0)) finish();
    producer.close();
    await waitUntil(() => broker.metrics.connectionsOpen === 1, 'the producer to be gone');
  });

  it('connections beyond booblik.max.connections are closed at once and counted', async (t) => {
    const { port, broker } = await startBroker(t, { maxConnections: 2 });
    const a = await RawClient.connect(port);
    const b = await RawClient.connect(port);
    t.after(() => {
      a.close();
      b.close();
    });
    await waitUntil(() => broker.metrics.connectionsOpen === 2, 'two connections');
    const c = await RawClient.connect(port);
    await c.closedPromise;
    assert.equal(broker.metrics.connectionsRejected, 1);
    assert.equal((await a.metadata()).errorCode, 0);
  });
});
