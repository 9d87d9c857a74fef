import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, ErrorCode, encodeMetadataRequest } from '@booblik/protocol';
import { metadataOf, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

describe('METADATA', () => {
  it('with no topic named: every topic, sorted by name, partitions by id, with both offsets', async (t) => {
    const { port } = await startBroker(t, {
      topics: [
        { name: 'zeta', partitions: 2 },
        { name: 'alpha', partitions: 1 },
        { name: 'Mid', partitions: 1 },
      ],
    });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    await c.produce({
      topic: 'zeta',
      partition: 1,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('x'), Buffer.from('y')],
    });
    assert.deepEqual(metadataOf(await c.metadata()), [
      { name: 'Mid', partitions: [{ partition: 0, logStartOffset: 0, highWatermark: 0 }] },
      { name: 'alpha', partitions: [{ partition: 0, logStartOffset: 0, highWatermark: 0 }] },
      {
        name: 'zeta',
        partitions: [
          { partition: 0, logStartOffset: 0, highWatermark: 0 },
          { partition: 1, logStartOffset: 0, highWatermark: 2 },
        ],
      },
    ]);
  });

  it('named topics come back sorted with duplicates collapsed; the same state gives the same bytes', async (t) => {
    const { port } = await startBroker(t, {
      topics: [
        { name: 'b', partitions: 1 },
        { name: 'a', partitions: 1 },
      ],
    });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const one = await c.metadata('b', 'a', 'b');
    const two = await c.metadata('a', 'b');
    assert.deepEqual(
      metadataOf(one).map((m) => m.name),
      ['a', 'b'],
    );
    assert.deepEqual(one.body, two.body);
  });

  it('a named unknown topic fails the whole request, so missing never looks like empty', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const refused = await c.metadata('t', 'missing');
    assert.equal(refused.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(refused.body.length, 0);
  });

  it('a negative topic count is CORRUPT_REQUEST with the id echoed', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const frame = encodeMetadataRequest(77, { topics: [] });
    frame.writeInt32BE(-1, 12);
    c.send(frame);
    const answer = await c.expect(77);
    assert.equal(answer.errorCode, ErrorCode.CORRUPT_REQUEST);
  });
});
