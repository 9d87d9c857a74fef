import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  ApiKey,
  decodeApiVersionsResponse,
  decodeInvalidArgument,
  decodeListResponse,
  decodeMetadataResponseV2,
  decodeOffsetMismatch,
  ErrorCode,
  encodeApiVersionsRequest,
  encodeListRequest,
  encodeMetadataRequest,
  encodeMetadataRequestV2,
  encodeMetadataResponse,
  encodeProduceRequestV2,
  supportedApiVersions,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { waitUntil, within } from '@booblik/testkit';
import { produced, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

const topics = [
  { name: 'orders', partitions: 2 },
  { name: 'clicks', partitions: 1 },
];

async function labelled(c: RawClient) {
  await c.apply([
    {
      op: 'upsert',
      spec: topicSpecWithDefaults({ name: 'orders', partitions: 2, labels: { team: 'payments' } }),
    },
    { op: 'upsert', spec: topicSpecWithDefaults({ name: 'clicks', partitions: 1, labels: { team: 'web' } }) },
  ]);
}

describe('LIST', () => {
  it('answers the topics a selector matches, sorted, with a route per partition to this broker', async (t) => {
    const { port } = await startBroker(t, { topics });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    await labelled(c);
    const all = decodeListResponse((await c.list()).body);
    assert.deepEqual(
      all.topics.map((x) => x.spec.name),
      ['clicks', 'orders'],
    );
    const orders = decodeListResponse((await c.list('team in (payments), !missing')).body);
    assert.deepEqual(
      orders.topics.map((x) => x.spec.name),
      ['orders'],
    );
    assert.deepEqual(orders.topics[0]!.routes, [
      { primary: `127.0.0.1:${port}`, replicas: [] },
      { primary: `127.0.0.1:${port}`, replicas: [] },
    ]);
    assert.equal(decodeListResponse((await c.list('team=nobody')).body).topics.length, 0);
  });

  it('a selector that does not parse is INVALID_ARGUMENT saying where, and the connection stays', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const refused = await c.list('team in (a');
    assert.equal(refused.errorCode, ErrorCode.INVALID_ARGUMENT);
    assert.match(decodeInvalidArgument(refused.body).message, /at 10: expected "," or "\)"/);
    assert.equal((await c.list()).errorCode, ErrorCode.NONE);
  });

  it('watch: held until an APPLY moves the revision, and woken within 10 ms', async (t) => {
    const { port, broker } = await startBroker(t);
    const [watcher, writer] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
    t.after(() => {
      watcher.close();
      writer.close();
    });
    const { revision } = decodeListResponse((await watcher.list()).body);
    const held = watcher.list('', revision, 30_000);
    let answeredAt = 0;
    void held.then(() => {
      answeredAt = performance.now();
    });
    await waitUntil(() => broker.topics.watchers === 1, 'the watch to be held');
    assert.equal(answeredAt, 0, 'not answered before a change');
    await writer.apply([{ op: 'upsert', spec: topicSpecWithDefaults({ name: 'new', partitions: 1 }) }]);
    const appliedAt = performance.now();
    const answer = decodeListResponse((await held).body);
    assert.equal(answer.revision, revision + 1);
    assert.ok(answer.topics.some((x) => x.spec.name === 'new'));
    assert.ok(
      answeredAt - appliedAt < 10,
      `woken ${(answeredAt - appliedAt).toFixed(1)} ms after the APPLY was answered`,
    );
  });

  it("watch: one that expires on the broker's clock answers its own revision and no topics, not before", async (t) => {
    const clock = new ManualClock();
    const { port } = await startBroker(t, {}, { clock, wallNowMs: Date.now });
    const c = await RawClient.connect(port);
    const other = await RawClient.connect(port);
    t.after(() => {
      c.close();
      other.close();
    });
    const { revision } = decodeListResponse((await c.list()).body);
    let answered = false;
    const watch = c.list('', revision, 60_000).finally(() => {
      answered = true;
    });
    await waitUntil(() => clock.pendingTimers > 0, 'the watch to be held');
    clock.advance(59_999);
    await other.metadata(); // the broker's loop has turned since the advance
    assert.equal(answered, false, 'answered before its 60 s had passed on the clock');
    clock.advance(1);
    const expired = decodeListResponse((await within(watch, 5000, 'the watch at the end of its wait')).body);
    assert.deepEqual(expired, { revision, topics: [] });
    const behind = decodeListResponse((await c.list('', revision - 1, 60_000)).body);
    assert.equal(behind.revision, revision, 'a watch from an older revision is answered at once');
    assert.ok(behind.topics.length > 0);
  });

  it('watch: a held LIST is answered at shutdown, not dropped', async (t) => {
    const { port, broker } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const { revision } = decodeListResponse((await c.list()).body);
    const id = c.id();
    c.send(encodeListRequest(id, { selector: '', watchRevision: revision, maxWaitMs: 60_000 }));
    const answer = c.expect(id);
    await waitUntil(() => broker.topics.watchers === 1, 'the watch to be held');
    await broker.close();
    assert.equal((await answer).errorCode, ErrorCode.NONE);
  });
});

describe('METADATA v2 and API_VERSIONS', () => {
  it('METADATA v1 answers byte for byte as before the additions', async (t) => {
    const { port } = await startBroker(t, { topics });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const id = c.id();
    c.send(encodeMetadataRequest(id, { topics: [] }));
    const answer = await c.expect(id);
    const expected = encodeMetadataResponse(id, [
      { name: 'clicks', partitions: [{ partition: 0, logStartOffset: 0, highWatermark: 0 }] },
      {
        name: 'orders',
        partitions: [
          { partition: 0, logStartOffset: 0, highWatermark: 0 },
          { partition: 1, logStartOffset: 0, highWatermark: 0 },
        ],
      },
    ]);
    assert.equal(answer.body.toString('hex'), expected.subarray(10).toString('hex'));
  });

  it('METADATA v2 adds the store revision and each partition route', async (t) => {
    const { port } = await startBroker(t, { topics });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const id = c.id();
    c.send(encodeMetadataRequestV2(id, { topics: ['orders'] }));
    const res = decodeMetadataResponseV2((await c.expect(id)).body);
    assert.equal(res.revision, decodeListResponse((await c.list()).body).revision);
    assert.deepEqual(res.topics[0]!.partitions[1], {
      partition: 1,
      logStartOffset: 0,
      highWatermark: 0,
      route: { primary: `127.0.0.1:${port}`, replicas: [] },
    });
  });

  it('API_VERSIONS lists every API and version the broker serves', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    c.send(encodeApiVersionsRequest(9));
    const ranges = decodeApiVersionsResponse((await c.expect(9)).body);
    assert.deepEqual(ranges, supportedApiVersions());
    assert.ok(ranges.some((r) => r.apiKey === ApiKey.APPLY));
  });
});

describe('PRODUCE v2', () => {
  it('lands at the expected offset; a stale one is OFFSET_MISMATCH with the actual end and writes nothing', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const send = async (expectedOffset: number, payload: string) => {
      const id = c.id();
      c.send(
        encodeProduceRequestV2(id, {
          topic: 't',
          partition: 0,
          ack: AckPolicy.WRITTEN,
          expectedOffset,
          records: [Buffer.from(payload)],
        }),
      );
      return c.expect(id);
    };
    assert.deepEqual(produced(await send(0, 'a')), { baseOffset: 0, logEndOffset: 1 });
    const stale = await send(0, 'b');
    assert.equal(stale.errorCode, ErrorCode.OFFSET_MISMATCH);
    assert.deepEqual(decodeOffsetMismatch(stale.body), { logEndOffset: 1 });
    assert.deepEqual(produced(await send(-1, 'c')), { baseOffset: 1, logEndOffset: 2 });
    assert.deepEqual(produced(await send(2, 'd')), { baseOffset: 2, logEndOffset: 3 });
  });
});
