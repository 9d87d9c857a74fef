import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { AckPolicy, type AckPolicyValue, encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { PartitionLog } from './partition-log.js';
import { type AppendResult, PartitionWriter, type ReplicationGate } from './partition-writer.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

interface Handed {
  baseOffset: number;
  stored: string;
  count: number;
  forced: boolean;
}

/** A gate that notes what it is handed and lets a test wait for the n-th group. */
class FakeGate implements ReplicationGate {
  readonly handed: Handed[] = [];
  private waiting: { n: number; resolve: () => void }[] = [];

  groupWritten(baseOffset: number, stored: Buffer, count: number, forced: boolean): void {
    this.handed.push({ baseOffset, stored: stored.toString('hex'), count, forced });
    for (const w of this.waiting.filter((x) => x.n <= this.handed.length)) w.resolve();
  }

  /** Resolves once `n` groups have been handed over. */
  until(n: number): Promise<void> {
    if (this.handed.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ n, resolve }));
  }
}

function gatedWriter(t: TestContext) {
  const { log } = PartitionLog.open(tempDir(t), 't-0', defaultLogConfig);
  const writer = new PartitionWriter(log);
  const gate = new FakeGate();
  writer.setReplicationGate(gate);
  t.after(() => log.close());
  return { log, writer, gate };
}

/** An append whose outcome can be looked at without awaiting it. */
function track(
  writer: PartitionWriter,
  payloads: Buffer[],
  ack: AckPolicyValue,
  order?: string[],
  label = '',
) {
  const state: { result?: AppendResult; error?: Error } = {};
  const done = writer.append(batchOf(payloads), ack).then(
    (result) => {
      state.result = result;
      order?.push(label);
    },
    (error: Error) => {
      state.error = error;
      order?.push(`${label} failed`);
    },
  );
  return { state, done };
}

/** Lets every pending callback and immediate run (the writer groups in setImmediate). */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('replication gate', () => {
  it('with a gate, a written group is handed over with its stored bytes but neither acknowledged nor readable before commitTo', async (t) => {
    const { log, writer, gate } = gatedWriter(t);
    const payloads = [rec('a'), rec('b'), rec('c')];
    const append = track(writer, payloads, AckPolicy.WRITTEN);
    await gate.until(1);
    await turn();
    assert.deepEqual(gate.handed, [
      { baseOffset: 0, stored: encodeStoredRecords(payloads).toString('hex'), count: 3, forced: false },
    ]);
    assert.equal(append.state.result, undefined, 'not acknowledged');
    assert.equal(log.highWatermark.value, 0, 'not readable');
    writer.commitTo(2);
    await turn();
    assert.equal(append.state.result, undefined, 'a commit offset inside the group does not acknowledge it');
    writer.commitTo(3);
    await append.done;
    assert.deepEqual(append.state.result, { baseOffset: 0, logEndOffset: 3 });
    assert.deepEqual(await readAll(log, 0), payloads);
  });

  it('a FORCED group waits for its own fdatasync even when already committed', async (t) => {
    const { log, writer, gate } = gatedWriter(t);
    const barriers: (() => void)[] = [];
    const realSync = log.sync.bind(log);
    log.sync = () => new Promise<void>((resolve) => barriers.push(() => realSync().then(resolve)));
    t.after(() => {
      for (const release of barriers) release();
    });
    const append = track(writer, [rec(0)], AckPolicy.FORCED);
    await gate.until(1);
    assert.equal(gate.handed[0]!.forced, true, 'the replicas are told to fdatasync too');
    writer.commitTo(1);
    await turn();
    assert.equal(append.state.result, undefined, 'committed but not durable here: not acknowledged');
    assert.equal(log.highWatermark.value, 0);
    assert.equal(barriers.length, 1);
    barriers.shift()!();
    await append.done;
    assert.deepEqual(append.state.result, { baseOffset: 0, logEndOffset: 1 });
  });

  it('commitTo in the middle of several groups acknowledges exactly those it covers, in write order', async (t) => {
    const { log, writer, gate } = gatedWriter(t);
    const order: string[] = [];
    const a = track(writer, [rec(0), rec(1)], AckPolicy.WRITTEN, order, 'a');
    await gate.until(1);
    const b = track(writer, [rec(2)], AckPolicy.WRITTEN, order, 'b');
    await gate.until(2);
    const c = track(writer, [rec(3), rec(4), rec(5)], AckPolicy.NONE, order, 'c');
    await gate.until(3);
    assert.deepEqual(
      gate.handed.map((h) => [h.baseOffset, h.count]),
      [
        [0, 2],
        [2, 1],
        [3, 3],
      ],
    );
    writer.commitTo(4);
    await Promise.all([a.done, b.done]);
    await turn();
    assert.deepEqual(order, ['a', 'b']);
    assert.equal(c.state.result, undefined);
    assert.equal(log.highWatermark.value, 3, 'published to the end of the last group acknowledged');
    writer.commitTo(3); // lower than before: nothing changes
    writer.commitTo(6);
    await c.done;
    assert.deepEqual(order, ['a', 'b', 'c']);
    assert.equal(log.highWatermark.value, 6);
  });

  it('failUncommitted tells a written batch its outcome is unknown and a queued one it was refused; a later commitTo publishes what was written', async (t) => {
    const { log, writer, gate } = gatedWriter(t);
    const told: string[] = [];
    writer.appendTo(batchOf([rec(0), rec(1)]), AckPolicy.WRITTEN, {
      appended: () => told.push('appended'),
      failed: (e) => told.push(`failed: ${e.message}`),
    });
    const written = track(writer, [rec('x')], AckPolicy.WRITTEN); // written with it, one turn later
    await gate.until(2);
    const queued = track(writer, [rec('never')], AckPolicy.WRITTEN); // queued for the next turn's group
    const refused = new Error('refused');
    const unknown = new Error('outcome unknown');
    writer.failUncommitted(refused, unknown);
    await Promise.all([written.done, queued.done]);
    assert.equal(written.state.error, unknown, 'written: its records stay, so its outcome is not known');
    assert.equal(queued.state.error, refused, 'queued: never written, so refused');
    await turn();
    assert.equal(log.logEndOffset, 3, 'the queued batch was never written');
    assert.equal(gate.handed.length, 2);
    writer.commitTo(3);
    assert.equal(log.highWatermark.value, 3, 'the records written stay, and are published once committed');
    assert.deepEqual(await readAll(log, 0), [rec(0), rec(1), rec('x')]);
    assert.deepEqual(told, ['failed: outcome unknown'], 'told once, and not told appended later');
    const after = track(writer, [rec(3)], AckPolicy.WRITTEN);
    await gate.until(3);
    writer.commitTo(4);
    await after.done;
    assert.deepEqual(after.state.result, { baseOffset: 3, logEndOffset: 4 }, 'the writer goes on');
  });

  it('clearing the gate does not acknowledge the groups written under it: they still wait for commitTo', async (t) => {
    const { log, writer, gate } = gatedWriter(t);
    const gated = track(writer, [rec(0)], AckPolicy.WRITTEN);
    await gate.until(1);
    writer.setReplicationGate(null);
    const ungated = track(writer, [rec(1)], AckPolicy.WRITTEN);
    await turn();
    await turn();
    assert.equal(gated.state.result, undefined);
    assert.equal(ungated.state.result, undefined, 'behind the gated group: acknowledgements stay in order');
    assert.equal(log.highWatermark.value, 0);
    writer.commitTo(1);
    await Promise.all([gated.done, ungated.done]);
    assert.equal(log.highWatermark.value, 2);
    assert.equal(gate.handed.length, 1, 'nothing handed over once cleared');
  });
});
