import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { decodeRecordsLost, ErrorCode, NO_EPOCH } from '@booblik/protocol';
import { tempDir, waitUntil } from '@booblik/testkit';
import { fetchedV5, type RawClient } from '../test-support/raw-client.js';
import {
  broker,
  createTopic,
  fileKit,
  manifestOf,
  partitionOf,
  persisted,
  produce,
  type StoreKit,
  TOPIC,
  UPLOAD_WAIT_MS,
} from '../test-support/store-kit.js';

/** Labels of the records written after the restore: `produce` names records by this number. */
const NEW_RECORDS_FROM = 10_000;

/** What a consumer holds: its position and the epoch of the last record it read (FETCH v5). */
interface Reader {
  position: number;
  lastEpoch: number;
  records: string[];
}

/** Reads with FETCH v5 from `reader.position` up to `end`, keeping each answer's records of one epoch. */
async function readTo(client: RawClient, reader: Reader, end: number): Promise<void> {
  while (reader.position < end) {
    const f = await client.fetchV5({
      topic: TOPIC,
      partition: 0,
      fetchOffset: reader.position,
      lastEpoch: reader.lastEpoch,
    });
    assert.equal(f.errorCode, ErrorCode.NONE, `FETCH v5 at ${reader.position}`);
    const answer = fetchedV5(f, reader.position);
    const kept =
      answer.epochEndOffset < 0
        ? answer.records
        : answer.records.slice(0, answer.epochEndOffset - reader.position);
    assert.ok(kept.length > 0, `records at ${reader.position}`);
    reader.records.push(...kept);
    reader.position += kept.length;
    reader.lastEpoch = answer.epoch;
  }
}

/**
 * A broker on `dataDir` that wrote records past its store's end (the active segment), read all of them
 * with FETCH v5, and stopped; then its partition's directory is deleted (a lost disk).
 */
async function writeThenLoseDisk(
  t: TestContext,
  kit: StoreKit,
  dataDir: string,
  from: number,
  reader: Reader,
) {
  const b = await broker(t, { dataDir });
  if (from === 0) await createTopic(b.client, kit.url);
  await produce(b.client, from, 300);
  await persisted(b);
  const p = partitionOf(b);
  const storeEnd = p
    .fragmentViews()
    .filter((v) => v.location === 'both')
    .at(-1)!.endOffset;
  const end = p.highWatermark.value;
  assert.ok(end > storeEnd, 'records past the store, in the active segment');
  await readTo(b.client, reader, end);
  await b.broker.close();
  const recorded = await manifestOf(kit.store);
  fs.rmSync(path.join(dataDir, `${TOPIC}-0`), { recursive: true });
  return { storeEnd, end, recordedHighWatermark: recorded.highWatermark };
}

describe('a partition restored from its store on an empty disk', () => {
  it('logs the offsets lost, and a FETCH v5 from past the restored end is answered RECORDS_LOST, never other records', async (t) => {
    const kit = await fileKit(t);
    const dataDir = tempDir(t, 'data');
    const reader: Reader = { position: 0, lastEpoch: NO_EPOCH, records: [] };
    const { storeEnd, end, recordedHighWatermark } = await writeThenLoseDisk(t, kit, dataDir, 0, reader);
    assert.equal(reader.lastEpoch, 0, 'a partition never restored is epoch 0');
    assert.ok(
      recordedHighWatermark !== undefined && recordedHighWatermark > storeEnd && recordedHighWatermark <= end,
      `the manifest recorded a high watermark past the store's end: ${recordedHighWatermark}`,
    );

    const second = await broker(t, { dataDir });
    const p = partitionOf(second);
    assert.equal(p.logEndOffset, storeEnd, 'offsets continue where the store ends');
    assert.ok(
      second.lines.some((l) =>
        l.startsWith(
          `WARN ${TOPIC}-0: restored from the store on an empty disk: offsets 0..${storeEnd} are read from it; ` +
            `offsets ${storeEnd}..${recordedHighWatermark} were readable and are lost`,
        ),
      ),
      second.lines.join('\n'),
    );

    const lostAt = async (fetchOffset: number) => {
      const f = await second.client.fetchV5({ topic: TOPIC, partition: 0, fetchOffset, lastEpoch: 0 });
      assert.equal(f.errorCode, ErrorCode.RECORDS_LOST, `FETCH v5 at ${fetchOffset} in epoch 0`);
      assert.deepEqual(decodeRecordsLost(f.body), { epoch: 0, endOffset: storeEnd });
    };
    await lostAt(end);
    await lostAt(storeEnd + 1);
    // New records (other payloads) take the lost offsets, and more: a reader there is still told.
    await produce(second.client, NEW_RECORDS_FROM, end - storeEnd + 20);
    assert.ok(p.highWatermark.value > end);
    await lostAt(end);
    await lostAt(storeEnd + 1);

    // From the restored end, epoch 0's reader goes on with the records there now, in epoch 1.
    const resumed: Reader = { position: storeEnd, lastEpoch: 0, records: [] };
    await readTo(second.client, resumed, storeEnd + 5);
    assert.equal(resumed.lastEpoch, 1);
    assert.match(resumed.records[0]!, new RegExp(`^record-${NEW_RECORDS_FROM}-`));
    assert.notEqual(resumed.records[0], reader.records[storeEnd], 'offset storeEnd holds another record now');
    // Before the restored end nothing changed: the answer says where epoch 0 ends.
    const f = await second.client.fetchV5({
      topic: TOPIC,
      partition: 0,
      fetchOffset: storeEnd - 3,
      lastEpoch: 0,
    });
    const across = fetchedV5(f, storeEnd - 3);
    assert.deepEqual([across.epoch, across.epochEndOffset], [0, storeEnd]);
    assert.deepEqual(across.records.slice(0, 3), reader.records.slice(storeEnd - 3, storeEnd));

    // The new epoch reaches the store at once, whatever happens to this disk next.
    await waitUntil(
      async () =>
        JSON.stringify((await manifestOf(kit.store)).epochs) ===
        JSON.stringify([{ epoch: 1, startOffset: storeEnd }]),
      'the epoch in the manifest',
      UPLOAD_WAIT_MS,
    );
  });

  it('a second lost disk begins the epoch after the one the store kept: readers of either are told', async (t) => {
    const kit = await fileKit(t);
    const dataDir = tempDir(t, 'data');
    const first: Reader = { position: 0, lastEpoch: NO_EPOCH, records: [] };
    const lost1 = await writeThenLoseDisk(t, kit, dataDir, 0, first);
    const second: Reader = { position: lost1.storeEnd, lastEpoch: 0, records: [] };
    const lost2 = await writeThenLoseDisk(t, kit, dataDir, NEW_RECORDS_FROM, second);
    assert.equal(second.lastEpoch, 1);
    assert.deepEqual((await manifestOf(kit.store)).epochs, [{ epoch: 1, startOffset: lost1.storeEnd }]);

    const third = await broker(t, { dataDir });
    assert.deepEqual(partitionOf(third).epochs.entries, [
      { epoch: 1, startOffset: lost1.storeEnd },
      { epoch: 2, startOffset: lost2.storeEnd },
    ]);
    for (const [reader, lost] of [
      [second, { epoch: 1, endOffset: lost2.storeEnd }],
      [first, { epoch: 0, endOffset: lost1.storeEnd }],
    ] as const) {
      const f = await third.client.fetchV5({
        topic: TOPIC,
        partition: 0,
        fetchOffset: reader.position,
        lastEpoch: reader.lastEpoch,
      });
      assert.equal(f.errorCode, ErrorCode.RECORDS_LOST, `a reader of epoch ${reader.lastEpoch}`);
      assert.deepEqual(decodeRecordsLost(f.body), lost);
    }
  });
});
