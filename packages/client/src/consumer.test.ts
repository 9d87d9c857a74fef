import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  ApiKey,
  ErrorCode,
  encodeErrorResponse,
  encodeFetchResponseHeader,
  encodeMetadataResponse,
  encodeStoredRecords,
  type Request,
} from '@booblik/protocol';
import { Connection } from './connection.js';
import type { ConsumerRecord } from './consumer.js';
import {
  AbortError,
  BrokerError,
  ConnectError,
  CorruptRecordError,
  RecordExceedsMaxBytesError,
} from './errors.js';
import { FakeBroker, type ReceivedRequest } from './test-support/fake-broker.js';
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

type Fetch = Extract<Request, { apiKey: typeof ApiKey.FETCH }>;

function fetchOf(got: ReceivedRequest): Fetch['body'] {
  assert.equal(got.request.apiKey, ApiKey.FETCH);
  return (got.request as Fetch).body;
}

function replyRecords(got: ReceivedRequest, highWatermark: number, payload: Buffer): void {
  got.reply(
    Buffer.concat([
      encodeFetchResponseHeader(got.request.correlationId, highWatermark, payload.length),
      payload,
    ]),
  );
}

const text = (records: ConsumerRecord[]) => records.map((r) => r.payload.toString());

describe('consumer', () => {
  it('iterates records in order across fetches; position is the next offset after each one', async () => {
    const log = new MemoryLog({ t: 1 });
    log.append(
      't',
      0,
      ['a', 'b', 'c', 'd', 'e'].map((s) => Buffer.from(s)),
    );
    const conn = await Connection.connect((await start(log)).address);
    // maxBytes of 20 holds two 9-byte records and a cut of the third: the cut is fetched again.
    const consumer = conn.consumer('t', 0, 1, { maxBytes: 20 });
    const seen: [string, number, number][] = [];
    for await (const record of consumer) {
      seen.push([record.payload.toString(), record.offset, consumer.position]);
      if (record.offset === 4) break;
    }
    assert.deepEqual(seen, [
      ['b', 1, 2],
      ['c', 2, 3],
      ['d', 3, 4],
      ['e', 4, 5],
    ]);
    assert.equal(consumer.lag, 0);
    await conn.close();
  });

  it('long fetch fields are sent: FETCH v2 with maxWaitMs 5000 and minBytes 1 by default', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 2, 40);
    const polled = consumer.poll();
    const got = await broker.nextRequest();
    assert.equal(got.request.apiVersion, 2);
    assert.deepEqual(fetchOf(got), {
      topic: 't',
      partition: 2,
      fetchOffset: 40,
      maxBytes: 1024 * 1024,
      maxWaitMs: 5000,
      minBytes: 1,
    });
    replyRecords(got, 40, Buffer.alloc(0));
    assert.deepEqual(await polled, [], 'an expired wait is an empty answer, not an error');
    assert.equal(consumer.position, 40);
    await conn.close();
  });

  it('a truncated tail is dropped and fetched again from its start, wherever the cut falls', async () => {
    const stored = encodeStoredRecords([Buffer.from('one'), Buffer.from('two'), Buffer.from('three')]);
    // 'one' and 'two' take 11 bytes each; the cut falls inside the third record's size field, its
    // CRC, and its payload.
    for (const cut of [25, 28, 33]) {
      const broker = await start();
      const conn = await Connection.connect(broker.address);
      const consumer = conn.consumer('t', 0, 10, { maxBytes: cut });
      const first = consumer.poll();
      replyRecords(await broker.nextRequest(), 13, stored.subarray(0, cut));
      assert.deepEqual(text(await first), ['one', 'two'], `cut at ${cut}`);
      assert.equal(consumer.position, 12);
      const second = consumer.poll();
      const again = await broker.nextRequest();
      assert.equal(fetchOf(again).fetchOffset, 12, 'the cut record is asked for again from its start');
      replyRecords(again, 13, stored.subarray(22));
      assert.deepEqual(text(await second), ['three']);
      assert.equal(consumer.position, 13);
      await conn.close();
    }
  });

  it('a record that can never fit raises RecordExceedsMaxBytesError with offset, size and maxBytes', async () => {
    const log = new MemoryLog({ t: 1 });
    log.append('t', 0, [Buffer.from('small'), Buffer.alloc(500)]);
    const conn = await Connection.connect((await start(log)).address);
    const consumer = conn.consumer('t', 0, 0, { maxBytes: 100 });
    const records: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const r of consumer) records.push(r.offset);
      })(),
      (e: unknown) =>
        e instanceof RecordExceedsMaxBytesError &&
        e.offset === 1 &&
        e.recordBytes === 500 &&
        e.maxBytes === 100,
    );
    assert.deepEqual(records, [0]);
    assert.equal(consumer.position, 1, 'the position stays at the record that does not fit');
    await conn.close();
  });

  it('a corrupt record is rejected with CorruptRecordError and never handed out', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0);
    const stored = encodeStoredRecords([Buffer.from('good'), Buffer.from('evil')]);
    stored[stored.length - 1]! ^= 0x20;
    const polled = consumer.poll();
    replyRecords(await broker.nextRequest(), 2, stored);
    await assert.rejects(polled, (e: unknown) => e instanceof CorruptRecordError && e.offset === 1);
    assert.equal(consumer.position, 0, 'nothing of a batch with a corrupt record is consumed');
    await conn.close();
  });

  it('break stops fetching: the next request on the connection is not a FETCH', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0);
    const loop = (async () => {
      for await (const record of consumer) {
        if (record.offset === 0) break;
      }
    })();
    // At the high watermark: nothing more is known to be there, so nothing is read ahead.
    replyRecords(await broker.nextRequest(), 2, encodeStoredRecords([Buffer.from('a'), Buffer.from('b')]));
    await loop;
    assert.equal(consumer.position, 1, 'only the record handed out counts');
    assert.equal(conn.pendingRequests, 0);
    const metadata = conn.metadata();
    const next = await broker.nextRequest();
    assert.equal(next.request.apiKey, ApiKey.METADATA);
    next.reply(encodeMetadataResponse(next.request.correlationId, []));
    await metadata;
    await conn.close();
  });

  // Bounded: without a read-ahead the request awaited below never comes.
  it('reads ahead, without waiting, when the last answer showed more records; break drops it in step', {
    timeout: 10_000,
  }, async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0);
    const seen: string[] = [];
    let handedFirst!: () => void;
    const firstHanded = new Promise<void>((resolve) => {
      handedFirst = resolve;
    });
    let finishLoop!: () => void;
    const mayFinish = new Promise<void>((resolve) => {
      finishLoop = resolve;
    });
    const loop = (async () => {
      for await (const record of consumer) {
        seen.push(record.payload.toString());
        if (record.offset === 0) {
          handedFirst();
          await mayFinish;
        }
        if (record.offset === 2) break;
      }
    })();
    replyRecords(await broker.nextRequest(), 5, encodeStoredRecords([Buffer.from('a'), Buffer.from('b')]));
    await firstHanded;
    // While record 0 is being handled, the fetch for offset 2 is already out, and asks for no wait.
    const ahead = await broker.nextRequest();
    assert.deepEqual([fetchOf(ahead).fetchOffset, fetchOf(ahead).maxWaitMs], [2, 0]);
    replyRecords(ahead, 5, encodeStoredRecords([Buffer.from('c'), Buffer.from('d')]));
    finishLoop();
    await loop;
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.equal(consumer.position, 3);
    // The read-ahead for offset 4 went out and is dropped; its answer keeps the connection in step.
    const dropped = await broker.nextRequest();
    assert.equal(fetchOf(dropped).fetchOffset, 4);
    const metadata = conn.metadata();
    const next = await broker.nextRequest();
    assert.equal(next.request.apiKey, ApiKey.METADATA);
    replyRecords(dropped, 5, encodeStoredRecords([Buffer.from('e')]));
    next.reply(encodeMetadataResponse(next.request.correlationId, []));
    assert.deepEqual(await metadata, []);
    assert.equal(consumer.position, 3, 'nothing of a dropped read-ahead is handed out');
    await conn.close();
  });

  it('a failed read-ahead is fetched again, and its error reaches the caller in its turn', {
    timeout: 10_000,
  }, async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0);
    const seen: string[] = [];
    const loop = (async () => {
      for await (const record of consumer) seen.push(record.payload.toString());
    })();
    replyRecords(await broker.nextRequest(), 9, encodeStoredRecords([Buffer.from('a'), Buffer.from('b')]));
    const ahead = await broker.nextRequest();
    ahead.reply(encodeErrorResponse(ahead.request.correlationId, ErrorCode.OFFSET_OUT_OF_RANGE));
    // The records before it are all handed out, then the fetch at offset 2 is made again.
    const again = await broker.nextRequest();
    assert.equal(fetchOf(again).fetchOffset, 2);
    assert.deepEqual(seen, ['a', 'b']);
    again.reply(encodeErrorResponse(again.request.correlationId, ErrorCode.OFFSET_OUT_OF_RANGE));
    await assert.rejects(
      loop,
      (e: unknown) => e instanceof BrokerError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE,
    );
    assert.equal(consumer.position, 2);
    await conn.close();
  });

  it('abort stops the iterator while a long fetch is held, and the connection stays in step', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const controller = new AbortController();
    const consumer = conn.consumer('t', 0, 0, { signal: controller.signal, maxWaitMs: 60_000 });
    let handed = 0;
    const loop = (async () => {
      for await (const _ of consumer) handed++;
    })();
    const held = await broker.nextRequest();
    controller.abort();
    await loop; // ends without an error: the caller asked it to stop
    assert.equal(handed, 0);
    assert.equal(consumer.state, 'closed');
    await assert.rejects(consumer.poll(), AbortError);
    const metadata = conn.metadata();
    const next = await broker.nextRequest();
    replyRecords(held, 1, encodeStoredRecords([Buffer.from('late')]));
    next.reply(encodeMetadataResponse(next.request.correlationId, []));
    assert.deepEqual(await metadata, []);
    await conn.close();
  });

  it('a consumer made with an already aborted signal ends at once, without fetching', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0, { signal: AbortSignal.abort() });
    for await (const _ of consumer) assert.fail('nothing is handed out');
    assert.equal(consumer.state, 'closed');
    await assert.rejects(consumer.poll(), AbortError);
    assert.equal(broker.received.length, 0);
    await conn.close();
  });

  it('return() on the iterator stops it like break', async () => {
    const log = new MemoryLog({ t: 1 });
    log.append('t', 0, [Buffer.from('a'), Buffer.from('b')]);
    const conn = await Connection.connect((await start(log)).address);
    const consumer = conn.consumer('t', 0, 0);
    const it = consumer[Symbol.asyncIterator]();
    assert.equal((await it.next()).value?.payload.toString(), 'a');
    assert.deepEqual(await it.return(), { done: true, value: undefined });
    assert.deepEqual(await it.next(), { done: true, value: undefined });
    assert.equal(consumer.position, 1);
    await conn.close();
  });

  it('reconnect resumes at the position after the connection is lost during a long fetch', async () => {
    const log = new MemoryLog({ t: 1 });
    log.append('t', 0, [Buffer.from('a'), Buffer.from('b')]);
    const broker = await start(log);
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0, { reconnectDelayMs: 1, maxWaitMs: 60_000 });
    const seen: string[] = [];
    const loop = (async () => {
      for await (const record of consumer) {
        seen.push(record.payload.toString());
        if (record.offset === 2) break;
      }
    })();
    assert.equal(((await broker.nextArrival()) as Fetch).body.fetchOffset, 0);
    assert.equal(((await broker.nextArrival()) as Fetch).body.fetchOffset, 2, 'held: nothing at 2 yet');
    broker.dropConnections();
    await conn.closed;
    log.append('t', 0, [Buffer.from('c')]);
    const resumed = (await broker.nextArrival()) as Fetch;
    assert.equal(resumed.body.fetchOffset, 2, 'the fetch after the loss starts at the position');
    await loop;
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.equal(broker.peers.length, 2, 'a second connection was dialed');
    assert.equal(consumer.position, 3);
    await consumer.close();
  });

  it('gives up after reconnectAttemptsMax dials and reports why', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    let dials = 0;
    const consumer = conn.consumer('t', 0, 0, {
      reconnectDelayMs: 1,
      reconnectAttemptsMax: 2,
      dial: () => {
        dials++;
        return Promise.reject(new ConnectError(broker.address, 'refused'));
      },
    });
    const polled = consumer.poll();
    await broker.nextRequest();
    broker.dropConnections();
    await assert.rejects(polled, ConnectError);
    assert.equal(dials, 2);
  });

  it('a refusal is not a lost connection: OFFSET_OUT_OF_RANGE reaches the caller at once', async () => {
    const broker = await start();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 1000);
    const polled = consumer.poll();
    const got = await broker.nextRequest();
    got.reply(encodeErrorResponse(got.request.correlationId, ErrorCode.OFFSET_OUT_OF_RANGE));
    await assert.rejects(
      polled,
      (e: unknown) => e instanceof BrokerError && e.codeName === 'OFFSET_OUT_OF_RANGE',
    );
    assert.equal(broker.peers.length, 1);
    await conn.close();
  });

  it('seek drops records fetched and not handed out, and the next fetch starts at the new offset', async () => {
    const log = new MemoryLog({ t: 1 });
    log.append(
      't',
      0,
      ['a', 'b', 'c', 'd'].map((s) => Buffer.from(s)),
    );
    const broker = await start(log);
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0);
    const seen: string[] = [];
    for await (const record of consumer) {
      seen.push(record.payload.toString());
      if (record.offset === 0) consumer.seek(3);
      if (record.offset === 3) break;
    }
    assert.deepEqual(seen, ['a', 'd']);
    assert.equal(consumer.position, 4);
    await conn.close();
  });

  it('lag is the distance from the position to the high watermark last seen', async () => {
    const log = new MemoryLog({ t: 1 });
    log.append(
      't',
      0,
      ['a', 'b', 'c', 'd'].map((s) => Buffer.from(s)),
    );
    const conn = await Connection.connect((await start(log)).address);
    const consumer = conn.consumer('t', 0, 0, { maxBytes: 18 });
    assert.equal(consumer.lag, undefined);
    await consumer.poll();
    assert.equal(consumer.position, 2);
    assert.equal(consumer.lag, 2);
    await conn.close();
  });
});
