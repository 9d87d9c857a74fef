import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import type { Partition } from '@booblik/log';
import { AckPolicy, ErrorCode } from '@booblik/protocol';
import { fetched, metadataOf, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

/** A broker whose partition t-0 holds two records, served from the segment file (no tail cache). */
async function setup(t: import('node:test').TestContext) {
  const b = await startBroker(t, { tailCacheBytes: 0 });
  const client = await RawClient.connect(b.port);
  t.after(() => client.close());
  await client.produce({
    topic: 't',
    partition: 0,
    ack: AckPolicy.WRITTEN,
    records: [Buffer.from('a'), Buffer.from('b')],
  });
  return { ...b, client };
}

async function assertConnectionServes(client: RawClient) {
  const answer = await client.metadata();
  assert.equal(answer.errorCode, 0);
  assert.ok(metadataOf(answer).some((topic) => topic.name === 't'));
}

describe('FETCH when the read fails', () => {
  it('of a closed partition is STORAGE_ERROR, and the connection still answers METADATA', async (t) => {
    const { client, broker } = await setup(t);
    // The served view hides close(); underneath it is the log's Partition.
    await (broker.partitions.get('t', 0) as unknown as Partition).close();
    const answer = await client.fetch({ topic: 't', partition: 0, fetchOffset: 0 });
    assert.equal(answer.errorCode, ErrorCode.STORAGE_ERROR);
    await assertConnectionServes(client);
  });

  it('with EIO from the disk is STORAGE_ERROR, the connection still answers, and the next read works', async (t) => {
    const { client, broker } = await setup(t);
    const eio = t.mock.method(fs, 'read', (...args: unknown[]) => {
      const callback = args.at(-1) as (error: NodeJS.ErrnoException) => void;
      process.nextTick(() =>
        callback(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO', errno: -5 })),
      );
    });
    const answer = await client.fetch({ topic: 't', partition: 0, fetchOffset: 0 });
    eio.mock.restore();
    assert.equal(answer.errorCode, ErrorCode.STORAGE_ERROR);
    assert.equal(broker.metrics.storageErrors, 1);
    await assertConnectionServes(client);
    assert.deepEqual(fetched(await client.fetch({ topic: 't', partition: 0, fetchOffset: 0 }), 0).records, [
      'a',
      'b',
    ]);
  });
});
