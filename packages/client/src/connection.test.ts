import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import {
  AckPolicy,
  ApiKey,
  ErrorCode,
  encodeErrorResponse,
  encodeFetchResponseHeader,
  encodeMetadataResponse,
  encodeProduceResponse,
  encodeStoredRecords,
  produceRecordPayloads,
  type Request,
} from '@booblik/protocol';
import { Connection } from './connection.js';
import {
  AbortError,
  BrokerError,
  ConnectError,
  ConnectionClosedError,
  CorruptRecordError,
  InvalidArgumentError,
  ProtocolError,
  RequestTooLargeError,
  TimeoutError,
} from './errors.js';
import { FakeBroker } from './test-support/fake-broker.js';
import { ManualClock } from './test-support/manual-clock.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

/** `p`, or a failure if it is still pending after 2 s: a deadline that never fires fails the test. */
function soon<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('still pending 2 s after its deadline')), 2000);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function fake(): Promise<FakeBroker> {
  const broker = await FakeBroker.start();
  brokers.push(broker);
  return broker;
}

function produceBody(req: Request) {
  assert.equal(req.apiKey, ApiKey.PRODUCE);
  return req.body as Extract<Request, { apiKey: typeof ApiKey.PRODUCE }>['body'];
}

function fetchBody(req: Request) {
  assert.equal(req.apiKey, ApiKey.FETCH);
  return req.body as Extract<Request, { apiKey: typeof ApiKey.FETCH }>['body'];
}

function fetchAnswer(correlationId: number, highWatermark: number, payload: Buffer): Buffer {
  return Buffer.concat([encodeFetchResponseHeader(correlationId, highWatermark, payload.length), payload]);
}

const meta = (id: number) =>
  encodeMetadataResponse(id, [
    { name: 't', partitions: [{ partition: 0, logStartOffset: 0, highWatermark: 7 }] },
  ]);

describe('connection: produce and metadata', () => {
  it('produce round trip: the broker decodes topic, partition, ack and records exactly as given', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const answer = conn.produce('orders', 2, [Buffer.from([0]), Buffer.from('hello')], {
      ack: AckPolicy.FORCED,
    });
    const got = await broker.nextRequest();
    const body = produceBody(got.request);
    assert.equal(body.topic, 'orders');
    assert.equal(body.partition, 2);
    assert.equal(body.ack, AckPolicy.FORCED);
    assert.deepEqual(produceRecordPayloads(body), [Buffer.from([0]), Buffer.from('hello')]);
    got.reply(encodeProduceResponse(got.request.correlationId, { baseOffset: 41, logEndOffset: 43 }));
    assert.deepEqual(await answer, { baseOffset: 41, logEndOffset: 43 });
    await conn.close();
  });

  it('ack NONE does not wait for an answer, and the next request still gets its own answer', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    // The fake never answers the NONE request: if the client waited, this would hang.
    assert.equal(await conn.produce('t', 0, [Buffer.from('x')], { ack: AckPolicy.NONE }), null);
    assert.equal(conn.pendingRequests, 0, 'a NONE request takes no slot in the answer queue');
    const metadata = conn.metadata('t');
    const first = await broker.nextRequest();
    assert.equal(produceBody(first.request).ack, AckPolicy.NONE);
    const second = await broker.nextRequest();
    assert.equal(second.request.apiKey, ApiKey.METADATA);
    second.reply(meta(second.request.correlationId));
    assert.equal((await metadata)[0]!.partitions[0]!.highWatermark, 7);
    await conn.close();
  });

  it('a refusal keeps the connection: BrokerError with code and name, then the next request succeeds', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const refused = conn.produce('missing', 0, [Buffer.from('x')]);
    const got = await broker.nextRequest();
    got.reply(encodeErrorResponse(got.request.correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    await assert.rejects(refused, (e: unknown) => {
      assert.ok(e instanceof BrokerError);
      assert.equal(e.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal(e.codeName, 'UNKNOWN_TOPIC_OR_PARTITION');
      assert.match(e.message, /PRODUCE missing\/0 refused: UNKNOWN_TOPIC_OR_PARTITION/);
      return true;
    });
    assert.equal(conn.state, 'open');
    const metadata = conn.metadata();
    const next = await broker.nextRequest();
    assert.equal(next.peer, got.peer, 'same connection');
    next.reply(meta(next.request.correlationId));
    assert.equal((await metadata).length, 1);
    await conn.close();
  });

  it('an unknown error code is shown as UNKNOWN(n), not a crash', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const refused = conn.metadata();
    const got = await broker.nextRequest();
    got.reply(encodeErrorResponse(got.request.correlationId, 77));
    await assert.rejects(refused, (e: unknown) => e instanceof BrokerError && e.codeName === 'UNKNOWN(77)');
    await conn.close();
  });

  it('pipelined requests are answered in order, each to its own caller', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const answers = [0, 1, 2].map((p) => conn.produce('t', p, [Buffer.from('r')]));
    const received = [await broker.nextRequest(), await broker.nextRequest(), await broker.nextRequest()];
    assert.equal(conn.pendingRequests, 3, 'all three were written before any answer');
    for (const r of received) {
      const p = produceBody(r.request).partition;
      r.reply(
        encodeProduceResponse(r.request.correlationId, { baseOffset: p * 10, logEndOffset: p * 10 + 1 }),
      );
    }
    assert.deepEqual(
      (await Promise.all(answers)).map((a) => a?.baseOffset),
      [0, 10, 20],
    );
    await conn.close();
  });

  it('answers split at every byte, or run together, still reach their own callers', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const answers = [0, 1, 2].map((p) => conn.produce('t', p, [Buffer.from('r')]));
    const received = [await broker.nextRequest(), await broker.nextRequest(), await broker.nextRequest()];
    const stream = Buffer.concat(
      received.map((r, i) =>
        encodeProduceResponse(r.request.correlationId, { baseOffset: i, logEndOffset: i + 1 }),
      ),
    );
    const { socket } = received[0]!.peer;
    socket.setNoDelay(true);
    for (let i = 0; i < stream.length; i++) {
      socket.write(stream.subarray(i, i + 1));
      if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve)); // let some bytes leave alone
    }
    assert.deepEqual(
      (await Promise.all(answers)).map((a) => a?.baseOffset),
      [0, 1, 2],
    );
    await conn.close();
  });

  it('a correlationId mismatch fails that request loudly and closes the connection, failing the rest', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const first = conn.metadata();
    const second = conn.metadata();
    const got = await broker.nextRequest();
    await broker.nextRequest();
    got.reply(meta(got.request.correlationId + 1000));
    await assert.rejects(
      first,
      (e: unknown) => e instanceof ProtocolError && /correlationId/.test(e.message),
    );
    await assert.rejects(
      second,
      (e: unknown) => e instanceof ConnectionClosedError && e.cause instanceof ProtocolError,
    );
    assert.equal(conn.state, 'closed');
    assert.ok((await conn.closed) instanceof ConnectionClosedError);
    await assert.rejects(conn.metadata(), ConnectionClosedError);
  });

  it('an answer nobody asked for is a protocol error that closes the connection', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const peer = await broker.nextConnection();
    peer.write(meta(1));
    const reason = await conn.closed;
    assert.ok(reason instanceof ConnectionClosedError && reason.cause instanceof ProtocolError);
  });

  it('a response frame longer than 8 MiB is refused as a protocol error, not buffered', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.metadata();
    const got = await broker.nextRequest();
    const header = Buffer.alloc(4);
    header.writeInt32BE(8 * 1024 * 1024 + 1, 0);
    got.reply(header);
    await assert.rejects(
      pending,
      (e: unknown) => e instanceof ConnectionClosedError && e.cause instanceof ProtocolError,
    );
  });

  it('a lost connection fails every pending request', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = [conn.metadata(), conn.produce('t', 0, [Buffer.from('x')]), conn.metadata('t')];
    for (let i = 0; i < 3; i++) await broker.nextRequest();
    broker.dropConnections();
    for (const p of pending) await assert.rejects(p, ConnectionClosedError);
    assert.equal(conn.state, 'closed');
  });

  it('a request with no answer in time fails with TimeoutError and closes the connection', async () => {
    const broker = await fake();
    const clock = new ManualClock();
    const conn = await Connection.connect(broker.address, { requestTimeoutMs: 1000, clock });
    const first = conn.metadata();
    const second = conn.metadata();
    await broker.nextRequest();
    await broker.nextRequest();
    clock.advance(999);
    assert.equal(conn.state, 'open');
    clock.advance(1);
    await assert.rejects(first, (e: unknown) => e instanceof TimeoutError && e.timeoutMs === 1000);
    await assert.rejects(
      second,
      (e: unknown) => e instanceof ConnectionClosedError && e.cause instanceof TimeoutError,
    );
    assert.equal(conn.state, 'closed');
  });

  it('a long fetch gets its wait added to the request timeout', async () => {
    const broker = await fake();
    const clock = new ManualClock();
    const conn = await Connection.connect(broker.address, { requestTimeoutMs: 1000, clock });
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 100, maxWaitMs: 5000 });
    await broker.nextRequest();
    clock.advance(5999);
    assert.equal(conn.state, 'open', 'the broker may hold the fetch for its whole wait');
    clock.advance(1);
    await assert.rejects(pending, TimeoutError);
  });

  it('a request sent after a longer-waiting one times out at its own deadline, not the earlier one', async () => {
    const broker = await fake();
    const clock = new ManualClock();
    const conn = await Connection.connect(broker.address, { requestTimeoutMs: 1000, clock });
    const long = conn.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 100, maxWaitMs: 5000 });
    await broker.nextRequest();
    const short = conn.metadata();
    await broker.nextRequest();
    clock.advance(999);
    assert.equal(conn.state, 'open');
    clock.advance(1);
    await assert.rejects(soon(short), (e: unknown) => e instanceof TimeoutError && e.timeoutMs === 1000);
    await assert.rejects(long, ConnectionClosedError);
  });

  it('a request sent after answered ones gets its whole timeout', async () => {
    const broker = await fake();
    const clock = new ManualClock();
    const conn = await Connection.connect(broker.address, { requestTimeoutMs: 1000, clock });
    const first = conn.produce('t', 0, [Buffer.from('x')]);
    const got = await broker.nextRequest();
    clock.advance(500);
    got.reply(encodeProduceResponse(got.request.correlationId, { baseOffset: 0, logEndOffset: 1 }));
    await first;
    clock.advance(400);
    const second = conn.metadata();
    await broker.nextRequest();
    clock.advance(100); // the first request's deadline passes: nothing is due then
    clock.advance(899);
    assert.equal(conn.state, 'open', 'the second request has had 999 of its 1000 ms');
    clock.advance(1);
    await assert.rejects(soon(second), TimeoutError);
  });

  it('close() waits for the answers still due, refuses new requests, then closes', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.metadata();
    const got = await broker.nextRequest();
    const closing = conn.close();
    assert.equal(conn.state, 'draining');
    await assert.rejects(conn.metadata(), ConnectionClosedError);
    got.reply(meta(got.request.correlationId));
    assert.equal((await pending).length, 1);
    await closing;
    assert.equal(conn.state, 'closed');
    assert.equal(await conn.closed, undefined, 'a clean close has no failure');
  });

  it('close() does not wait for an answer nobody waits for any more (an aborted long fetch)', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const controller = new AbortController();
    const held = conn.fetch(
      { topic: 't', partition: 0, offset: 0, maxBytes: 10, maxWaitMs: 60_000 },
      {
        signal: controller.signal,
      },
    );
    await broker.nextRequest();
    const closing = conn.close();
    assert.equal(conn.state, 'draining', 'the fetch is still due');
    controller.abort();
    await assert.rejects(held, AbortError);
    await closing;
    assert.equal(conn.state, 'closed');
  });

  it('ack NONE records reach the broker even when close() follows at once', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    await conn.produce('t', 0, [Buffer.from('last words')], { ack: AckPolicy.NONE });
    await conn.close();
    const got = await broker.nextRequest();
    assert.deepEqual(produceRecordPayloads(produceBody(got.request)), [Buffer.from('last words')]);
  });

  it('a request larger than a frame is refused locally and the connection stays usable', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    await assert.rejects(conn.produce('t', 0, [Buffer.alloc(8 * 1024 * 1024)]), RequestTooLargeError);
    assert.equal(conn.state, 'open');
    const m = conn.metadata();
    const got = await broker.nextRequest();
    assert.equal(got.request.apiKey, ApiKey.METADATA);
    got.reply(meta(got.request.correlationId));
    await m;
    await conn.close();
  });

  it('values the wire cannot carry are refused before encoding, naming the field', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    await assert.rejects(
      conn.fetch({ topic: 't', partition: 0, offset: 2 ** 53, maxBytes: 10 }),
      (e: unknown) => e instanceof InvalidArgumentError && /^offset: 9007199254740992/.test(e.message),
    );
    await assert.rejects(
      conn.fetch({ topic: 't', partition: 2 ** 31, offset: 0, maxBytes: 10 }),
      /partition/,
    );
    await assert.rejects(conn.produce('t', -1, [Buffer.from('x')]), /partition: -1/);
    await conn.close();
  });

  it('an offset beyond 2^53 in an answer is a protocol error, never a rounded offset', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.produce('t', 0, [Buffer.from('x')]);
    const got = await broker.nextRequest();
    const answer = encodeProduceResponse(got.request.correlationId, { baseOffset: 0, logEndOffset: 1 });
    answer.writeBigInt64BE(2n ** 53n + 1n, 10);
    got.reply(answer);
    await assert.rejects(pending, (e: unknown) => e instanceof ProtocolError && /baseOffset/.test(e.message));
  });
});

describe('connection: fetch', () => {
  const three = [Buffer.alloc(100, 1), Buffer.alloc(100, 2), Buffer.alloc(100, 3)];
  const stored = encodeStoredRecords(three);

  it('long fetch fields are sent: version 2 with maxWaitMs and minBytes', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.fetch({
      topic: 't',
      partition: 3,
      offset: 12,
      maxBytes: 4096,
      maxWaitMs: 2500,
      minBytes: 64,
    });
    const got = await broker.nextRequest();
    assert.equal(got.request.apiVersion, 2);
    assert.deepEqual(fetchBody(got.request), {
      topic: 't',
      partition: 3,
      fetchOffset: 12,
      maxBytes: 4096,
      maxWaitMs: 2500,
      minBytes: 64,
    });
    got.reply(fetchAnswer(got.request.correlationId, 12, Buffer.alloc(0)));
    const result = await pending;
    assert.deepEqual(result.records, []);
    assert.equal(result.highWatermark, 12);
    assert.equal(result.nextOffset, 12);
    await conn.close();
  });

  it('whole records come back with their offsets', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 5, maxBytes: 1000 });
    const got = await broker.nextRequest();
    got.reply(fetchAnswer(got.request.correlationId, 8, stored));
    const result = await pending;
    assert.deepEqual(
      result.records.map((r) => [r.offset, r.payload[0]]),
      [
        [5, 1],
        [6, 2],
        [7, 3],
      ],
    );
    assert.equal(result.nextOffset, 8);
    await conn.close();
  });

  it('a truncated tail is dropped: only whole records, and the cut is reported', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 250 });
    const got = await broker.nextRequest();
    got.reply(fetchAnswer(got.request.correlationId, 3, stored.subarray(0, 250)));
    const result = await pending;
    assert.equal(result.records.length, 2);
    assert.equal(result.nextOffset, 2);
    assert.equal(result.truncatedBytes, 250 - 216);
    assert.equal(result.truncatedRecordBytes, 100);
    assert.equal(result.recordExceedsMaxBytes, false);
    await conn.close();
  });

  it('truncation inside a record header drops the header bytes too', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 111 });
    const got = await broker.nextRequest();
    // 108 bytes of the first record, then 3 bytes of the second record's size field.
    got.reply(fetchAnswer(got.request.correlationId, 3, stored.subarray(0, 111)));
    const result = await pending;
    assert.equal(result.records.length, 1);
    assert.equal(result.nextOffset, 1);
    assert.equal(result.truncatedBytes, 3);
    assert.equal(result.truncatedRecordBytes, -1, 'the size field did not arrive');
    await conn.close();
  });

  it('a record larger than maxBytes is reported with its size instead of looking caught up', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const big = encodeStoredRecords([Buffer.alloc(500, 9)]);
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 4, maxBytes: 100 });
    const got = await broker.nextRequest();
    got.reply(fetchAnswer(got.request.correlationId, 5, big.subarray(0, 100)));
    const result = await pending;
    assert.equal(result.records.length, 0);
    assert.equal(result.recordExceedsMaxBytes, true);
    assert.equal(result.truncatedRecordBytes, 500);
    await conn.close();
  });

  it('a corrupt record is rejected (never returned) and the connection stays open', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const bad = Buffer.from(stored);
    bad[108 + 8 + 50]! ^= 0x01; // a bit inside the second payload
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 10, maxBytes: 1000 });
    const got = await broker.nextRequest();
    got.reply(fetchAnswer(got.request.correlationId, 13, bad));
    await assert.rejects(pending, (e: unknown) => e instanceof CorruptRecordError && e.offset === 11);
    assert.equal(conn.state, 'open');
    await conn.close();
  });

  it('payloadBytes disagreeing with the frame is a protocol error', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const pending = conn.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 1000 });
    const got = await broker.nextRequest();
    const answer = fetchAnswer(got.request.correlationId, 3, stored);
    answer.writeInt32BE(stored.length + 1, 18); // payloadBytes
    got.reply(answer);
    await assert.rejects(
      pending,
      (e: unknown) => e instanceof ProtocolError && /payloadBytes/.test(e.message),
    );
    assert.equal(conn.state, 'closed');
  });

  it('an aborted fetch stops waiting; its late answer is dropped and the next request gets its own', async () => {
    const broker = await fake();
    const conn = await Connection.connect(broker.address);
    const controller = new AbortController();
    const pending = conn.fetch(
      { topic: 't', partition: 0, offset: 0, maxBytes: 1000, maxWaitMs: 60_000 },
      {
        signal: controller.signal,
      },
    );
    const held = await broker.nextRequest();
    controller.abort();
    await assert.rejects(pending, AbortError);
    const metadata = conn.metadata();
    const next = await broker.nextRequest();
    held.reply(fetchAnswer(held.request.correlationId, 3, stored));
    next.reply(meta(next.request.correlationId));
    assert.equal((await metadata)[0]!.name, 't');
    await conn.close();
  });
});

describe('connection: connect', () => {
  it('a refused connect is a ConnectError naming the address', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await assert.rejects(
      Connection.connect(`127.0.0.1:${port}`),
      (e: unknown) => e instanceof ConnectError && e.message.includes(`127.0.0.1:${port}`),
    );
  });

  it('an aborted signal stops the attempt', async () => {
    const broker = await fake();
    await assert.rejects(Connection.connect(broker.address, { signal: AbortSignal.abort() }), AbortError);
  });

  it('a malformed address is refused before dialing', async () => {
    await assert.rejects(Connection.connect('host:99999'), InvalidArgumentError);
  });
});
