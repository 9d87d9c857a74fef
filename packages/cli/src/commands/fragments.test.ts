import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, FakeBroker } from '@booblik/client/testing';
import {
  ErrorCode,
  encodeErrorResponse,
  encodeListFragmentsResponse,
  encodeMetadataResponse,
  FragmentLocation,
  type ListFragmentsRequest,
} from '@booblik/protocol';
import { booblik } from '../test-support/spawn.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

const PERSISTED_MS = Date.UTC(2026, 0, 2, 3, 4, 5);

/** A broker whose topic "orders" has two partitions: partition 0 half in the store. */
async function serve(asked: ListFragmentsRequest[]): Promise<FakeBroker> {
  const broker = await FakeBroker.start(({ request }) => {
    if (request.apiKey === ApiKey.METADATA) {
      const known = request.body.topics.every((t) => t === 'orders');
      return known
        ? encodeMetadataResponse(request.correlationId, [
            {
              name: 'orders',
              partitions: [0, 1].map((partition) => ({ partition, logStartOffset: 0, highWatermark: 0 })),
            },
          ])
        : encodeErrorResponse(request.correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    }
    if (request.apiKey !== ApiKey.LIST_FRAGMENTS)
      return encodeErrorResponse(request.correlationId, ErrorCode.UNSUPPORTED_VERSION);
    asked.push(request.body);
    if (request.body.topic !== 'orders') {
      return encodeErrorResponse(request.correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    }
    const all = [
      {
        partition: 0,
        logStartOffset: 0,
        highWatermark: 12,
        fragments: [
          {
            baseOffset: 0,
            endOffset: 5,
            sizeBytes: 300,
            location: FragmentLocation.STORE,
            persistedMs: PERSISTED_MS,
          },
          {
            baseOffset: 5,
            endOffset: 10,
            sizeBytes: 310,
            location: FragmentLocation.BOTH,
            persistedMs: PERSISTED_MS,
          },
          { baseOffset: 10, endOffset: 12, sizeBytes: 40, location: FragmentLocation.LOCAL, persistedMs: -1 },
        ],
      },
      {
        partition: 1,
        logStartOffset: 0,
        highWatermark: 0,
        fragments: [
          { baseOffset: 0, endOffset: 0, sizeBytes: 0, location: FragmentLocation.LOCAL, persistedMs: -1 },
        ],
      },
    ];
    const wanted =
      request.body.partition < 0 ? all : all.filter((p) => p.partition === request.body.partition);
    if (wanted.length === 0) {
      return encodeErrorResponse(request.correlationId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    }
    return encodeListFragmentsResponse(request.correlationId, wanted);
  });
  brokers.push(broker);
  return broker;
}

describe('booblik fragments', () => {
  it('prints each segment with its offsets, bytes, where it lives and when it was persisted', async () => {
    const asked: ListFragmentsRequest[] = [];
    const broker = await serve(asked);
    const run = await booblik(['fragments', 'orders', '--broker', broker.address]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout.toString(),
      [
        'PARTITION  FIRST  LAST  BYTES  WHERE  PERSISTED',
        '0          0      4     300    store  2026-01-02T03:04:05.000Z',
        '0          5      9     310    both   2026-01-02T03:04:05.000Z',
        '0          10     11    40     local  -',
        '1          0      -     0      local  -',
        '',
      ].join('\n'),
    );
    assert.deepEqual(asked, [{ topic: 'orders', partition: -1 }]);
  });

  it('--partition asks for that partition only; an unknown topic is exit 1 saying there is no such topic', async () => {
    const asked: ListFragmentsRequest[] = [];
    const broker = await serve(asked);
    const one = await booblik(['fragments', 'orders', '--partition', '1', '--broker', broker.address]);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout.toString().split('\n').length, 3, 'a header and one row');
    const unknown = await booblik(['fragments', 'nope', '--broker', broker.address]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'booblik: no topic nope\n');
    assert.deepEqual(asked, [
      { topic: 'orders', partition: 1 },
      { topic: 'nope', partition: -1 },
    ]);
  });

  it('a partition the topic lacks says so, with the partitions it has, not that the topic may not exist', async () => {
    const broker = await serve([]);
    const run = await booblik(['fragments', 'orders', '--partition', '5', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'booblik: topic orders has no partition 5 (it has partitions 0..1)\n');
    const unknown = await booblik(['fragments', 'nope', '--partition', '5', '--broker', broker.address]);
    assert.equal(unknown.stderr, 'booblik: no topic nope\n');
  });

  it('no topic, or a bad --partition, is a usage error (exit 2)', async () => {
    assert.equal((await booblik(['fragments'])).code, 2);
    const bad = await booblik(['fragments', 'orders', '--partition', '-3']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--partition: "-3", expected an integer 0\.\./);
  });
});
