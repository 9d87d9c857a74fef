import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, InvariantError } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { defaultLogConfig } from '../config.js';
import { LogClosedError, StorageError } from '../errors.js';
import { PartitionLog } from '../partition-log.js';
import { PartitionWriter, type ReplicationGate } from '../partition-writer.js';
import { MemoryFiles } from '../test-support/memory-files.js';
import { readAll } from '../test-support/read-all.js';
import { batchOf, rec } from '../test-support/records.js';
import { GROUP_MOVES, GROUP_STATES, type GroupState, moveGroup } from './group-state.js';

describe('group states: moves', () => {
  // Restated here: a change to the writer's table must change this one too.
  const allowed: Record<GroupState, GroupState[]> = {
    written: ['syncing', 'durable'],
    syncing: ['durable', 'failed'],
    durable: ['gated', 'answered'],
    failed: ['gated', 'answered'],
    gated: ['answered'],
    answered: [],
  };
  for (const from of GROUP_STATES) {
    for (const to of GROUP_STATES) {
      const ok = allowed[from].includes(to);
      it(`group: ${from} -> ${to} is ${ok ? 'taken' : 'refused, state unchanged'}`, () => {
        const group = { state: from as GroupState, endOffset: 7 };
        if (ok) {
          moveGroup('t-0', group, to);
          assert.equal(group.state, to);
        } else {
          assert.throws(
            () => moveGroup('t-0', group, to),
            (e) =>
              e instanceof InvariantError &&
              e.message === `t-0: a group ending at 7 may not go from ${from} to ${to}`,
          );
          assert.equal(group.state, from);
        }
      });
    }
  }

  it('group: the writer allows exactly these moves', () => {
    assert.deepEqual(GROUP_MOVES, allowed);
  });
});

/**
 * A writer on in-memory files whose fdatasyncs each wait for the test's `release` (then run, and may
 * fail as the files say), and whose errors are noted.
 */
function openWriter() {
  const files = new MemoryFiles();
  const { log } = PartitionLog.open('/memory/t-0', 't-0', defaultLogConfig, { files });
  const errors: string[] = [];
  const logger = { info() {}, warn() {}, error: (m: string) => errors.push(m) };
  const writer = new PartitionWriter(log, { clock: new ManualClock(), logger });
  const realSync = log.sync.bind(log);
  const barriers: (() => void)[] = [];
  log.sync = () => new Promise<void>((ok, fail) => barriers.push(() => realSync().then(ok, fail)));
  return { files, log, writer, barriers, errors };
}

/** An append whose outcome can be looked at without awaiting it. */
function track(writer: PartitionWriter, value: number, ack: (typeof AckPolicy)[keyof typeof AckPolicy]) {
  const seen: { answered: boolean; error?: Error } = { answered: false };
  const done = writer.append(batchOf([rec(value)]), ack).then(
    () => {
      seen.answered = true;
    },
    (error: Error) => {
      seen.answered = true;
      seen.error = error;
    },
  );
  return { seen, done };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('group states through the writer', () => {
  it('written -> durable: a group that asked for no barrier is answered without any fdatasync', async () => {
    const { log, writer, barriers } = openWriter();
    await writer.append(batchOf([rec(0)]), AckPolicy.WRITTEN);
    assert.equal(barriers.length, 0);
    assert.equal(log.highWatermark.value, 1);
  });

  it('syncing: a FORCED group is neither answered nor readable while its fdatasync runs', async () => {
    const { log, writer, barriers } = openWriter();
    const forced = track(writer, 0, AckPolicy.FORCED);
    await turn();
    assert.equal(barriers.length, 1);
    assert.equal(forced.seen.answered, false);
    assert.equal(log.highWatermark.value, 0);
    barriers[0]!();
    await forced.done;
    assert.equal(log.highWatermark.value, 1);
  });

  it('durable: a group done with the disk still waits behind an older group that is syncing', async () => {
    const { log, writer, barriers } = openWriter();
    const older = track(writer, 0, AckPolicy.FORCED);
    await turn();
    const newer = track(writer, 1, AckPolicy.WRITTEN);
    await turn();
    assert.equal(log.logEndOffset, 2, 'the newer group is written');
    assert.equal(newer.seen.answered, false, 'answered before the older group');
    assert.equal(log.highWatermark.value, 0);
    barriers[0]!();
    await Promise.all([older.done, newer.done]);
    assert.equal(log.highWatermark.value, 2);
  });

  it('failed: a failed fdatasync refuses its FORCED members and answers its WRITTEN ones, records kept', async () => {
    const { files, log, writer, barriers } = openWriter();
    const forced = track(writer, 0, AckPolicy.FORCED);
    const written = track(writer, 1, AckPolicy.WRITTEN); // same turn: the same group
    await turn();
    files.failSync(1);
    barriers[0]!();
    await Promise.all([forced.done, written.done]);
    assert.ok(forced.seen.error instanceof StorageError, `FORCED got ${forced.seen.error}`);
    assert.equal(written.seen.error, undefined);
    assert.equal(writer.stats.groups, 1);
    assert.deepEqual(await readAll(log, 0), [rec(0), rec(1)], 'the records stay in the log');
  });

  it('gated: a group done with the disk waits until a commit offset covers its end', async () => {
    const { log, writer, barriers } = openWriter();
    const gate: ReplicationGate = { groupWritten() {} };
    writer.setReplicationGate(gate);
    const forced = track(writer, 0, AckPolicy.FORCED);
    const written = track(writer, 1, AckPolicy.WRITTEN);
    await turn();
    barriers[0]!();
    await turn();
    writer.commitTo(1);
    await turn();
    assert.equal(forced.seen.answered, false, 'answered before the commit covered its end');
    assert.equal(log.highWatermark.value, 0);
    writer.commitTo(2);
    await Promise.all([forced.done, written.done]);
    assert.equal(forced.seen.error, undefined);
    assert.equal(log.highWatermark.value, 2);
  });

  it('answered: a barrier reported done twice is a bug that stops the writer, after one answer', async () => {
    const { log, writer, errors } = openWriter();
    let answers = 0;
    // A sync that calls back twice (a broken promise-like): the second moves an answered group.
    log.sync = (() => ({
      // biome-ignore lint/suspicious/noThenProperty: a misbehaving thenable on purpose
      then(ok: () => void) {
        queueMicrotask(() => {
          ok();
          ok();
        });
      },
    })) as unknown as typeof log.sync;
    writer.appendTo(batchOf([rec(0)]), AckPolicy.FORCED, {
      appended: () => answers++,
      failed: (e) => assert.fail(`answered once already, then failed: ${e}`),
    });
    await turn();
    assert.equal(answers, 1);
    assert.deepEqual(errors, ['t-0: a group ending at 1 may not go from answered to durable']);
    assert.equal(writer.state, 'closing', 'stopped');
    await assert.rejects(writer.append(batchOf([rec(1)]), AckPolicy.WRITTEN), LogClosedError);
    assert.equal(log.logEndOffset, 1, 'nothing stored after the stop');
  });
});
