import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, fetchableRecordBytesMax, recordHeaderBytes } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import { LogClosedError, RecordTooLargeError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { PartitionWriter } from './partition-writer.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

function openWriter(dir: string, config: Partial<LogConfig> = {}) {
  const { log } = PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...config });
  return { log, writer: new PartitionWriter(log) };
}

describe('partition writer', () => {
  it('group commit: fifty FORCED producers in one turn share one write and one fdatasync', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const acks = await Promise.all(
      Array.from({ length: 50 }, (_, i) => writer.append(batchOf([rec(i)]), AckPolicy.FORCED)),
    );
    assert.deepEqual(
      acks.map((a) => a.baseOffset),
      Array.from({ length: 50 }, (_, i) => i),
      'offsets follow call order',
    );
    assert.equal(writer.stats.groups, 1);
    assert.equal(writer.stats.forcedSyncs, 1);
    for (const a of acks) assert.equal(a.logEndOffset, 50);
  });

  it('WRITTEN alone never waits for an fdatasync', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    // A barrier that never completes on its own: an acknowledgement that waited for one never arrives.
    const barriers: (() => void)[] = [];
    let barrierStarted!: () => void;
    const started = new Promise<'barrier'>((resolve) => {
      barrierStarted = () => resolve('barrier');
    });
    log.sync = () =>
      new Promise<void>((resolve) => {
        barriers.push(resolve);
        barrierStarted();
      });
    t.after(() => {
      for (const release of barriers) release();
    });
    const acked = Promise.all([
      writer.append(batchOf([rec(0)]), AckPolicy.WRITTEN),
      writer.append(batchOf([rec(1)]), AckPolicy.NONE),
    ]).then(() => 'acked' as const);
    assert.equal(await Promise.race([acked, started]), 'acked');
    assert.equal(barriers.length, 0, 'no fdatasync was started');
    assert.equal(log.highWatermark.value, 2, 'published without a barrier');
  });

  it('an acknowledged WRITTEN batch is already readable: the watermark moved before the ack arrived', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const ack = await writer.append(batchOf([rec('a'), rec('b')]), AckPolicy.WRITTEN);
    assert.equal(log.highWatermark.value, ack.baseOffset + 2);
    assert.deepEqual(await readAll(log, 0), [rec('a'), rec('b')]);
  });

  it('a waiter is told at once for a lone WRITTEN batch, and the batch is readable when it is told', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    let told: { baseOffset: number; highWatermark: number } | undefined;
    writer.appendTo(batchOf([rec('a')]), AckPolicy.WRITTEN, {
      appended: (baseOffset) => {
        told = { baseOffset, highWatermark: log.highWatermark.value };
      },
      failed: (error) => assert.fail(error),
    });
    assert.deepEqual(
      told,
      { baseOffset: 0, highWatermark: 1 },
      'told before appendTo returned, published first',
    );
  });

  it('a waiter that appends again from inside its acknowledgement queues behind it, offsets in call order', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const offsets: number[] = [];
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const chain = (i: number) =>
      writer.appendTo(batchOf([rec(i)]), AckPolicy.WRITTEN, {
        appended: (baseOffset) => {
          offsets.push(baseOffset);
          if (i < 5) chain(i + 1);
          else resolve();
        },
        failed: (error) => assert.fail(error),
      });
    chain(0);
    await done;
    assert.deepEqual(offsets, [0, 1, 2, 3, 4, 5]);
    assert.equal(log.highWatermark.value, 6);
    assert.deepEqual(
      await readAll(log, 0),
      [0, 1, 2, 3, 4, 5].map((i) => rec(i)),
    );
  });

  it('batches acknowledged while a barrier runs join the next group, in order', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const first = writer.append(batchOf([rec(0)]), AckPolicy.FORCED);
    await new Promise((r) => setImmediate(r)); // the first group is now waiting on its fdatasync
    const later = [1, 2, 3].map((i) => writer.append(batchOf([rec(i)]), AckPolicy.FORCED));
    const acks = await Promise.all([first, ...later]);
    assert.deepEqual(
      acks.map((a) => a.baseOffset),
      [0, 1, 2, 3],
    );
    assert.equal(writer.stats.groups, 2, 'one group for the first, one for the three that queued behind it');
    assert.equal(writer.stats.forcedSyncs, 2);
  });

  it('FORCED producers acknowledged together share the next barrier, though they come back turns apart', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const producers = 4;
    const rounds = 20;
    const turn = () => new Promise((r) => setImmediate(r));
    await Promise.all(
      Array.from({ length: producers }, async (_, p) => {
        for (let round = 0; round < rounds; round++) {
          await writer.append(batchOf([rec(`${p}-${round}`)]), AckPolicy.FORCED);
          for (let i = 0; i < p; i++) await turn(); // each answer takes a different time to come back
        }
      }),
    );
    // One barrier per round, give or take a round split by a stall longer than the hold's bound (a
    // barrier started at the first producer back made 2.5 to 3 per round).
    assert.ok(
      writer.stats.forcedSyncs <= rounds * 1.5,
      `${writer.stats.forcedSyncs} barriers for ${rounds} rounds of ${producers} producers, expected about one a round`,
    );
  });

  it('a lone FORCED producer is never held: its next barrier starts in the turn its batch arrives', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const barriers: (() => void)[] = [];
    log.sync = () => new Promise<void>((resolve) => barriers.push(resolve));
    const turn = () => new Promise((r) => setImmediate(r));
    const first = writer.append(batchOf([rec(0)]), AckPolicy.FORCED);
    await turn();
    barriers[0]!();
    await first;
    const second = writer.append(batchOf([rec(1)]), AckPolicy.FORCED);
    await turn();
    assert.equal(barriers.length, 2, 'the producer that was acknowledged is the one expected back');
    barriers[1]!();
    await second;
  });

  it('a FORCED producer that does not come back holds the next barrier only briefly', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const barriers: (() => void)[] = [];
    log.sync = () => new Promise<void>((resolve) => barriers.push(resolve));
    const turn = () => new Promise((r) => setImmediate(r));
    const both = [0, 1].map((i) => writer.append(batchOf([rec(i)]), AckPolicy.FORCED));
    await turn();
    barriers[0]!();
    await Promise.all(both);
    const again = writer.append(batchOf([rec(2)]), AckPolicy.FORCED); // the other producer stays away
    await turn();
    assert.equal(barriers.length, 1, 'held for the producer expected back');
    const heldFrom = performance.now();
    while (barriers.length < 2 && performance.now() - heldFrom < 2000) await turn();
    assert.equal(barriers.length, 2, 'started without it');
    barriers[1]!();
    await again;
  });

  it('barriers overlap, but acknowledgements and the high watermark follow write order', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    const barriers: (() => void)[] = [];
    log.sync = () => new Promise<void>((resolve) => barriers.push(resolve)); // completes when the test says
    const settled: string[] = [];
    const a = writer.append(batchOf([rec('a')]), AckPolicy.FORCED).then(() => settled.push('a'));
    await new Promise((r) => setImmediate(r));
    const b = writer.append(batchOf([rec('b')]), AckPolicy.FORCED).then(() => settled.push('b'));
    await new Promise((r) => setImmediate(r));
    assert.equal(barriers.length, 2, "the second group's barrier started without waiting for the first");
    barriers[1]!(); // the later barrier finishes first
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(settled, [], 'b waits for a');
    assert.equal(log.highWatermark.value, 0, 'nothing is published past an unfinished barrier');
    barriers[0]!();
    await Promise.all([a, b]);
    assert.deepEqual(settled, ['a', 'b']);
    assert.equal(log.highWatermark.value, 2);
  });

  it('RECORD_TOO_LARGE refuses the whole batch and writes nothing of it; other batches are unaffected', async (t) => {
    const { log, writer } = openWriter(tempDir(t), { segmentBytesMax: 100 });
    t.after(() => log.close());
    const ok1 = writer.append(batchOf([rec('ok', 50)]), AckPolicy.WRITTEN);
    const tooLarge = writer.append(batchOf([rec('fits', 10), rec('huge', 93)]), AckPolicy.WRITTEN);
    const ok2 = writer.append(batchOf([rec('ok2', 50)]), AckPolicy.WRITTEN);
    await assert.rejects(tooLarge, (e: unknown) => e instanceof RecordTooLargeError && e.recordIndex === 1);
    assert.deepEqual([(await ok1).baseOffset, (await ok2).baseOffset], [0, 1]);
    assert.deepEqual(await readAll(log, 0), [rec('ok', 50), rec('ok2', 50)]);
  });

  it('a record of exactly a segment’s capacity is accepted', async (t) => {
    const { log, writer } = openWriter(tempDir(t), { segmentBytesMax: 100 });
    t.after(() => log.close());
    await writer.append(batchOf([rec('x', 92)]), AckPolicy.WRITTEN);
    assert.equal(log.highWatermark.value, 1);
  });

  it('a record too large for any FETCH answer is refused, though a segment could hold it', async (t) => {
    const { log, writer } = openWriter(tempDir(t), { segmentBytesMax: 16 * 1024 * 1024 });
    t.after(() => log.close());
    const readable = fetchableRecordBytesMax - recordHeaderBytes; // 8,388,582 payload bytes
    const unreadable = writer.append(batchOf([rec('too-big', readable + 1)]), AckPolicy.WRITTEN);
    await assert.rejects(unreadable, (e: unknown) => e instanceof RecordTooLargeError && e.recordIndex === 0);
    await writer.append(batchOf([rec('largest', readable)]), AckPolicy.WRITTEN);
    assert.equal(log.highWatermark.value, 1);
    const answer = await log.read(0, 2 ** 31 - 1);
    assert.equal(answer.bytes, fetchableRecordBytesMax, 'the largest record is served whole');
    answer.release?.();
  });

  it('backpressure: a full queue makes callers wait, and waiting batches keep their order', async (t) => {
    const { log, writer } = openWriter(tempDir(t), { writerQueueBytesMax: 100 });
    t.after(() => log.close());
    const appends = Array.from({ length: 10 }, (_, i) =>
      writer.append(batchOf([rec(i, 40)]), AckPolicy.WRITTEN),
    );
    assert.ok(writer.blockedBatches >= 7, `most batches wait for space (${writer.blockedBatches} blocked)`);
    const acks = await Promise.all(appends);
    assert.deepEqual(
      acks.map((a) => a.baseOffset),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.equal(writer.blockedBatches, 0);
    assert.ok(writer.stats.groups >= 4, 'no group is larger than the queue allows');
  });

  it('close lets queued batches finish, then refuses new ones', async (t) => {
    const dir = tempDir(t);
    const { log, writer } = openWriter(dir);
    const pending = [
      writer.append(batchOf([rec(0)]), AckPolicy.WRITTEN),
      writer.append(batchOf([rec(1)]), 1),
    ];
    const closing = writer.close();
    await assert.rejects(writer.append(batchOf([rec(2)]), AckPolicy.WRITTEN), LogClosedError);
    await closing;
    assert.equal((await Promise.all(pending)).length, 2);
    log.close();
    const reopened = PartitionLog.open(dir, 't-0', defaultLogConfig).log;
    t.after(() => reopened.close());
    assert.equal(reopened.highWatermark.value, 2);
  });

  it('flush policy: every N records an fdatasync runs without holding acknowledgements', async (t) => {
    const { log, writer } = openWriter(tempDir(t), { flushEveryRecords: 10 });
    t.after(() => log.close());
    for (let i = 0; i < 5; i++) {
      await writer.append(batchOf(Array.from({ length: 4 }, (_, j) => rec(i * 4 + j))), AckPolicy.WRITTEN);
    }
    await writer.close();
    assert.ok(writer.stats.flushSyncs >= 1, `flush syncs: ${writer.stats.flushSyncs}`);
    assert.equal(writer.stats.forcedSyncs, 0);
  });
});
