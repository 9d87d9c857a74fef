import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, ErrorCode, encodeProduceRequest } from '@booblik/protocol';
import { fetched, metadataOf, produced, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

const bytes = (s: string) => Buffer.from(s);

describe('PRODUCE', () => {
  it('a batch lands contiguously from the previous end, and FETCH returns it byte for byte', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const first = await c.produce({
      topic: 't',
      partition: 1,
      ack: AckPolicy.WRITTEN,
      records: [bytes('a')],
    });
    assert.deepEqual(produced(first), { baseOffset: 0, logEndOffset: 1 });
    const batch = Array.from({ length: 10 }, (_, i) => bytes(`r${i}`));
    const second = await c.produce({ topic: 't', partition: 1, ack: AckPolicy.FORCED, records: batch });
    assert.deepEqual(produced(second), { baseOffset: 1, logEndOffset: 11 });
    const read = fetched(await c.fetch({ topic: 't', partition: 1, fetchOffset: 1 }), 1);
    assert.deepEqual(read.records, batch.map(String));
    assert.equal(read.highWatermark, 11);
  });

  it('an unknown topic and an unknown partition are UNKNOWN_TOPIC_OR_PARTITION, and the connection stays', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const noTopic = await c.produce({
      topic: 'nope',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [bytes('x')],
    });
    assert.equal(noTopic.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(noTopic.body.length, 0, 'an error response has no body');
    const noPartition = await c.produce({
      topic: 't',
      partition: 3,
      ack: AckPolicy.WRITTEN,
      records: [bytes('x')],
    });
    assert.equal(noPartition.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await c.metadata('t')).errorCode, 0, 'the connection still answers');
  });

  it('RECORD_TOO_LARGE refuses the batch and writes nothing of it', async (t) => {
    const { port } = await startBroker(t, { segmentBytesMax: 100 });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const refused = await c.produce({
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [bytes('small'), Buffer.alloc(93)],
    });
    assert.equal(refused.errorCode, ErrorCode.RECORD_TOO_LARGE);
    const meta = metadataOf(await c.metadata('t'));
    assert.equal(meta[0]!.partitions[0]!.highWatermark, 0, 'not even the small record was written');
  });

  it('the empty record is CORRUPT_REQUEST and the high watermark does not move', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const refused = await c.produce({
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.alloc(0)],
    });
    assert.equal(refused.errorCode, ErrorCode.CORRUPT_REQUEST);
    assert.equal(metadataOf(await c.metadata('t'))[0]!.partitions[0]!.highWatermark, 0);
  });

  it('ack NONE is never answered, not even when refused: the next answer is the next request’s', async (t) => {
    const { port, broker } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    c.send(
      encodeProduceRequest(501, { topic: 'nope', partition: 0, ack: AckPolicy.NONE, records: [bytes('x')] }),
    );
    c.send(
      encodeProduceRequest(502, {
        topic: 't',
        partition: 0,
        ack: AckPolicy.NONE,
        records: [Buffer.alloc(0)],
      }),
    );
    c.send(
      encodeProduceRequest(503, { topic: 't', partition: 0, ack: AckPolicy.NONE, records: [bytes('kept')] }),
    );
    // `metadata` checks that the next frame on the wire carries its own correlationId: any answer to
    // one of the three NONE requests would arrive first and fail it.
    await c.metadata('t');
    assert.equal(broker.metrics.silentRefusals, 2, 'both refusals were counted');
    const read = fetched(await c.fetch({ topic: 't', partition: 0, fetchOffset: 0 }), 0);
    assert.deepEqual(read.records, ['kept'], 'the accepted NONE record was written');
  });
});
