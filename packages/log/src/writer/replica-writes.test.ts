import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, encodeStoredRecords } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from '../config.js';
import { OffsetMismatchError, StorageError } from '../errors.js';
import { PartitionLog } from '../partition-log.js';
import { PartitionWriter } from '../partition-writer.js';
import { batchOf, rec } from '../test-support/records.js';
import { WriterModeError } from './writer-state.js';

/** A writer whose log's fdatasyncs are counted and released (or failed) by the test. */
function openWriter(dir: string) {
  const { log } = PartitionLog.open(dir, 't-0', defaultLogConfig);
  const writer = new PartitionWriter(log, { clock: new ManualClock() });
  const barriers: { release: () => void; fail: (e: Error) => void }[] = [];
  log.sync = () => new Promise<void>((release, fail) => barriers.push({ release, fail }));
  return { log, writer, barriers };
}

function replicaWrite(writer: PartitionWriter, base: number, value: number, forced: boolean): Promise<void> {
  const stored = encodeStoredRecords([rec(value)]);
  return new Promise((resolve, reject) =>
    writer.writeReplica(base, stored, 1, forced, { appended: () => resolve(), failed: reject }),
  );
}

const turn = () => new Promise((r) => setImmediate(r));

describe('replica writes through the writer', () => {
  it('replica: two FORCED writes arriving in one turn share one fdatasync, and wait for it', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    let answered = 0;
    const writes = [replicaWrite(writer, 0, 0, true), replicaWrite(writer, 1, 1, true)].map((w) =>
      w.then(() => answered++),
    );
    assert.equal(log.logEndOffset, 2, 'written at once: the next group may follow in the same turn');
    await turn();
    assert.equal(barriers.length, 1, 'one fdatasync for both');
    assert.equal(answered, 0, 'not answered before the fdatasync');
    barriers[0]!.release();
    await Promise.all(writes);
    assert.equal(answered, 2);
    assert.equal(log.highWatermark.value, 0, 'a replica write is not published by the writer');
  });

  it('replica: FORCED writes of one callback share one fdatasync, started before the loop turns, answered after it', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    let answered = 0;
    const writes = [0, 1, 2].map((i) => replicaWrite(writer, i, i, true).then(() => answered++));
    await new Promise<void>((r) => queueMicrotask(r));
    assert.equal(barriers.length, 1, 'one fdatasync for the three, started at the end of their callback');
    assert.equal(turned, false, 'it waited for the next turn of the loop');
    await turn();
    assert.equal(answered, 0, 'answered before the fdatasync covering it');
    replicaWrite(writer, 3, 3, true).then(() => answered++);
    await new Promise<void>((r) => queueMicrotask(r));
    assert.equal(barriers.length, 2, 'a write of a later callback gets a barrier of its own');
    barriers[0]!.release();
    await Promise.all(writes);
    assert.equal(answered, 3, 'the later write waits for its own barrier');
    barriers[1]!.release();
    await turn();
    assert.equal(answered, 4);
  });

  it('replica: a FORCED write whose request moves the commit offset starts its barrier before the request returns', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    const first = replicaWrite(writer, 0, 0, true);
    writer.commitTo(0); // no move: the barrier waits for the end of the callback
    assert.equal(barriers.length, 0);
    await new Promise<void>((r) => queueMicrotask(r));
    const second = replicaWrite(writer, 1, 1, true);
    writer.commitTo(1); // as Partition.publishCommitted does after writeReplicated
    assert.equal(barriers.length, 2, 'the barrier of the second waited');
    for (const b of barriers) b.release();
    await Promise.all([first, second]);
  });

  it('replica: a write at a wrong base offset is refused and stores nothing', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    await replicaWrite(writer, 0, 0, false);
    await assert.rejects(replicaWrite(writer, 5, 1, true), OffsetMismatchError);
    await assert.rejects(replicaWrite(writer, 0, 1, false), OffsetMismatchError);
    await turn();
    assert.equal(log.logEndOffset, 1);
    assert.equal(barriers.length, 0, 'no fdatasync for a refused write');
  });

  it('replica: a failed fdatasync fails every FORCED write of its group', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    const writes = [replicaWrite(writer, 0, 0, true), replicaWrite(writer, 1, 1, true)];
    await turn();
    barriers[0]!.fail(new StorageError('fdatasync failed', 'EIO'));
    for (const w of writes) await assert.rejects(w, StorageError);
  });

  it('replica: FORCED writes count against the primary cap on fdatasyncs in flight', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      writes.push(replicaWrite(writer, i, i, true));
      await turn();
    }
    assert.equal(barriers.length, 3, 'SYNCS_IN_FLIGHT_MAX barriers, the rest wait and gather');
    barriers[0]!.release();
    await turn();
    assert.equal(barriers.length, 4, 'the two waiting share the next barrier');
    for (const b of barriers.slice(1)) b.release();
    await Promise.all(writes);
  });

  it('writer: a primary append while a replica write waits is refused, nothing stored', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    const replica = replicaWrite(writer, 0, 0, true);
    await assert.rejects(writer.append(batchOf([rec(1)]), AckPolicy.WRITTEN), WriterModeError);
    assert.equal(log.logEndOffset, 1);
    await turn();
    barriers[0]!.release();
    await replica;
    assert.equal(
      (await writer.append(batchOf([rec(1)]), AckPolicy.WRITTEN)).baseOffset,
      1,
      'idle: may switch',
    );
  });

  it('writer: a replica write while a primary append waits is refused, nothing stored', async (t) => {
    const { log, writer, barriers } = openWriter(tempDir(t));
    t.after(() => log.close());
    const primary = writer.append(batchOf([rec(0)]), AckPolicy.FORCED);
    await assert.rejects(replicaWrite(writer, 0, 9, false), WriterModeError);
    await turn();
    assert.equal(log.logEndOffset, 1);
    barriers[0]!.release();
    await primary;
  });
});
