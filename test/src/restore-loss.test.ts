/**
 * A TypeScript consumer reading through a lost disk: the broker (a real process) restores its topic
 * from the store on an empty disk, and a consumer whose position was past what the store kept is told
 * its records were lost (RecordsLostError, at the offset where they begin), never handed the records
 * written after the restore under the offsets it had already read.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Connection, RecordsLostError } from '@booblik/client';
import { FragmentLocation } from '@booblik/protocol';
import { BrokerProcess, tempDir, waitUntil, within } from '@booblik/testkit';

const TOPIC = 'orders';
/** Every wait here is bounded: uploads go about once a second. */
const WAIT_MS = 30_000;
/** Small segments, so a few hundred records close several and leave the active one holding some. */
const FLAGS = ['--segment.capacity.bytes=2048'];

async function produce(connection: Connection, label: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    const records = Array.from({ length: Math.min(10, count - i) }, (_, k) =>
      Buffer.from(`${label}-${i + k}`),
    );
    await connection.produce(TOPIC, 0, records);
  }
}

test('a consumer past what the store kept is told its records were lost after a restore, not served new ones under its offsets', async (t) => {
  const dataDir = tempDir(t, 'restore-data');
  const storeDir = tempDir(t, 'restore-store');
  const first = await BrokerProcess.start(t, { dataDir, flags: FLAGS, http: false });
  let address = `127.0.0.1:${first.port}`;
  const producer = await Connection.connect(address);
  await producer.applyTopics([
    { op: 'upsert', spec: { name: TOPIC, partitions: 1, storeUrl: `file://${storeDir}` } },
  ]);
  await produce(producer, 'old', 300);

  // Every closed segment uploaded; the active one (never uploaded) holds the last records.
  let storeEnd = 0;
  let highWatermark = 0;
  await waitUntil(
    async () => {
      const [p] = await producer.listFragments(TOPIC, 0);
      const closed = p!.fragments.slice(0, -1);
      storeEnd = closed.at(-1)?.endOffset ?? 0;
      highWatermark = p!.highWatermark;
      return closed.length > 0 && closed.every((f) => f.location === FragmentLocation.BOTH);
    },
    'every closed segment in the store',
    WAIT_MS,
    10,
  );
  assert.ok(highWatermark > storeEnd, `records past the store: ${storeEnd}..${highWatermark}`);
  await producer.close();

  const consumer = (await Connection.connect(address)).consumer(TOPIC, 0, 0, {
    maxWaitMs: 0,
    reconnectDelayMs: 20,
    dial: () => Connection.connect(address),
  });
  t.after(() => consumer.close());
  const read: string[] = [];
  while (consumer.position < highWatermark)
    read.push(...(await consumer.poll()).map((r) => r.payload.toString()));
  assert.equal(read.at(-1), `old-${highWatermark - 1}`);
  assert.equal(consumer.epoch, 0);

  // The disk is lost while the broker is down; it starts again on an empty one.
  assert.equal((await first.stop()).code, 0);
  fs.rmSync(path.join(dataDir, `${TOPIC}-0`), { recursive: true });
  const second = await BrokerProcess.start(t, { dataDir, flags: FLAGS, http: false });
  address = `127.0.0.1:${second.port}`;
  await second.waitForLine(
    new RegExp(
      `${TOPIC}-0: restored from the store on an empty disk: offsets 0\\.\\.${storeEnd} are read from it; offsets ${storeEnd}\\.\\.\\d+ were readable and are lost`,
    ),
    WAIT_MS,
  );
  const again = await Connection.connect(address);
  t.after(() => again.close());
  await produce(again, 'new', highWatermark - storeEnd + 10); // the lost offsets, and more, hold new records

  const lost = await within(
    consumer.poll().then(
      (records) => assert.fail(`served ${records.map((r) => `${r.offset}:${r.payload}`).join(', ')}`),
      (error: unknown) => error,
    ),
    WAIT_MS,
    'the consumer to reconnect and fetch',
  );
  assert.ok(lost instanceof RecordsLostError, String(lost));
  assert.deepEqual([lost.lostFromOffset, lost.fetchOffset, lost.epoch], [storeEnd, highWatermark, 0]);
  assert.equal(consumer.position, highWatermark, 'nothing was handed out');

  // Going on from where the lost records began: the partition's records there now.
  consumer.seek(lost.lostFromOffset, lost.epoch);
  const [next] = await consumer.poll();
  assert.deepEqual([next?.offset, next?.payload.toString()], [storeEnd, 'new-0']);
  assert.equal(consumer.epoch, 1);
});
