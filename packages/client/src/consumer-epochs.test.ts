import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  ApiKey,
  ErrorCode,
  encodeApiVersionsResponse,
  encodeFetchResponseHeader,
  encodeFetchResponseHeaderV5,
  encodeNotPrimaryResponse,
  encodeRecordsLostResponse,
  encodeStoredRecords,
  type FetchRequest,
  type Request,
  supportedApiVersions,
} from '@booblik/protocol';
import { Connection } from './connection.js';
import type { ConsumerRecord } from './consumer.js';
import { BrokerError } from './errors.js';
import { FakeBroker, type ReceivedRequest } from './test-support/fake-broker.js';
import { RecordsLostError } from './topic-errors.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

/** A broker with FETCH v5 (it says so in API_VERSIONS); every other request goes to the test's queue. */
async function brokerWithEpochs(): Promise<FakeBroker> {
  const broker = await FakeBroker.start(undefined, { apiVersions: 'handled' });
  brokers.push(broker);
  return broker;
}

/** Answers the API_VERSIONS a consumer asks first on a connection, then returns the next request. */
async function afterVersions(broker: FakeBroker): Promise<ReceivedRequest> {
  const got = await broker.nextRequest();
  if (got.request.apiKey !== ApiKey.API_VERSIONS) return got;
  got.reply(encodeApiVersionsResponse(got.request.correlationId, supportedApiVersions()));
  return broker.nextRequest();
}

function fetchOf(got: ReceivedRequest): { version: number; body: FetchRequest } {
  const request = got.request as Extract<Request, { apiKey: typeof ApiKey.FETCH }>;
  assert.equal(request.apiKey, ApiKey.FETCH);
  return { version: request.apiVersion, body: request.body };
}

function replyV5(got: ReceivedRequest, span: { epoch: number; epochEndOffset: number }, records: string[]) {
  const payload = encodeStoredRecords(records.map((r) => Buffer.from(r)));
  const id = got.request.correlationId;
  got.reply(Buffer.concat([encodeFetchResponseHeaderV5(id, 100, span, payload.length), payload]));
}

const text = (records: ConsumerRecord[]) => records.map((r) => `${r.offset}:${r.payload}`);

describe('consumer epochs (FETCH v5)', () => {
  it('sends the epoch of the last record it read, and hands out one epoch per fetch', async () => {
    const broker = await brokerWithEpochs();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0, { maxWaitMs: 0 });
    assert.equal(consumer.epoch, -1, 'nothing read yet');

    const first = consumer.poll();
    const got = await afterVersions(broker);
    assert.deepEqual([fetchOf(got).version, fetchOf(got).body.lastEpoch], [5, -1]);
    // Epoch 0 ends at offset 3: records 3 and 4 are a later epoch's, fetched again from 3.
    replyV5(got, { epoch: 0, epochEndOffset: 3 }, ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(text(await first), ['0:a', '1:b', '2:c']);
    assert.deepEqual([consumer.position, consumer.epoch], [3, 0]);

    const second = consumer.poll();
    const again = await broker.nextRequest();
    assert.deepEqual([fetchOf(again).body.fetchOffset, fetchOf(again).body.lastEpoch], [3, 0]);
    replyV5(again, { epoch: 1, epochEndOffset: -1 }, ['d', 'e']);
    assert.deepEqual(text(await second), ['3:d', '4:e']);
    assert.equal(consumer.epoch, 1);
    await conn.close();
  });

  it('records the broker lost are RecordsLostError naming where they start; seek there with its epoch goes on', async () => {
    const broker = await brokerWithEpochs();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 10, { maxWaitMs: 0, epoch: 0 });

    const polled = consumer.poll();
    const got = await afterVersions(broker);
    assert.deepEqual([fetchOf(got).body.fetchOffset, fetchOf(got).body.lastEpoch], [10, 0]);
    got.reply(encodeRecordsLostResponse(got.request.correlationId, { epoch: 0, endOffset: 7 }));
    const lost = await polled.then(
      () => assert.fail('the lost records were not reported'),
      (error: unknown) => error,
    );
    assert.ok(lost instanceof RecordsLostError && lost instanceof BrokerError, String(lost));
    assert.deepEqual(
      [lost.code, lost.codeName, lost.retriable, lost.lostFromOffset, lost.fetchOffset, lost.epoch],
      [ErrorCode.RECORDS_LOST, 'RECORDS_LOST', false, 7, 10, 0],
    );
    assert.match(lost.message, /the records read from offset 7 up to 10 were lost by the broker/);
    assert.equal(consumer.position, 10, 'the position stays where it was: the caller decides');

    consumer.seek(lost.lostFromOffset, lost.epoch);
    const resumed = consumer.poll();
    const next = await broker.nextRequest();
    assert.deepEqual([fetchOf(next).body.fetchOffset, fetchOf(next).body.lastEpoch], [7, 0]);
    replyV5(next, { epoch: 1, epochEndOffset: -1 }, ['new']);
    assert.deepEqual(text(await resumed), ['7:new']);
    await conn.close();
  });

  it('a broker without FETCH v5 is fetched as before (v2), and the epoch stays unknown', async () => {
    const broker = await FakeBroker.start(); // answers API_VERSIONS as a broker from before it
    brokers.push(broker);
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0, { maxWaitMs: 0, epoch: 3 });
    const polled = consumer.poll();
    const got = await broker.nextRequest();
    assert.equal(fetchOf(got).version, 2);
    const payload = encodeStoredRecords([Buffer.from('a')]);
    got.reply(
      Buffer.concat([encodeFetchResponseHeader(got.request.correlationId, 1, payload.length), payload]),
    );
    assert.deepEqual(text(await polled), ['0:a']);
    assert.equal(consumer.epoch, -1, 'records read without an epoch: none known');
    await conn.close();
  });

  it('on a Connection to a cluster broker that is not the primary, a v5 fetch refused NOT_PRIMARY goes on as v2', async () => {
    const broker = await brokerWithEpochs();
    const conn = await Connection.connect(broker.address);
    const consumer = conn.consumer('t', 0, 0, { maxWaitMs: 0 });
    const polled = consumer.poll();
    const got = await afterVersions(broker);
    assert.equal(fetchOf(got).version, 5);
    const route = { primary: '127.0.0.1:1', replicas: [] };
    got.reply(encodeNotPrimaryResponse(got.request.correlationId, route));
    const proxied = await broker.nextRequest();
    assert.equal(fetchOf(proxied).version, 2, 'v2, which this broker proxies to the primary');
    const payload = encodeStoredRecords([Buffer.from('x')]);
    proxied.reply(
      Buffer.concat([encodeFetchResponseHeader(proxied.request.correlationId, 1, payload.length), payload]),
    );
    assert.deepEqual(text(await polled), ['0:x']);
    await conn.close();
  });
});
