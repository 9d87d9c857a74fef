import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, InvariantError } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from '../config.js';
import { LogClosedError } from '../errors.js';
import { PartitionLog } from '../partition-log.js';
import { PartitionWriter } from '../partition-writer.js';
import { batchOf, rec } from '../test-support/records.js';
import { WriterLifecycle, type WriterState } from './writer-state.js';

function lifecycleIn(state: WriterState): WriterLifecycle {
  const lifecycle = new WriterLifecycle('t-0');
  if (state !== 'accepting') lifecycle.moveTo('closing');
  if (state === 'closed') lifecycle.moveTo('closed');
  return lifecycle;
}

describe('writer lifecycle', () => {
  const every: WriterState[] = ['accepting', 'closing', 'closed'];
  const allowed: Record<WriterState, WriterState[]> = {
    accepting: ['closing'],
    closing: ['closed'],
    closed: [],
  };
  for (const from of every) {
    for (const to of every) {
      const ok = allowed[from].includes(to);
      it(`writer lifecycle: ${from} -> ${to} is ${ok ? 'taken' : 'refused, state unchanged'}`, () => {
        const lifecycle = lifecycleIn(from);
        if (ok) {
          lifecycle.moveTo(to);
          assert.equal(lifecycle.state, to);
        } else {
          assert.throws(() => lifecycle.moveTo(to), InvariantError);
          assert.equal(lifecycle.state, from);
        }
      });
    }
  }

  it('writer lifecycle: mustBe refuses any other state', () => {
    const lifecycle = lifecycleIn('closing');
    lifecycle.mustBe('closing');
    assert.throws(() => lifecycle.mustBe('accepting'), /writer is closing, expected accepting/);
  });
});

function openWriter(dir: string, config: Partial<LogConfig> = {}) {
  const clock = new ManualClock();
  const { log } = PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...config });
  return { log, clock, writer: new PartitionWriter(log, { clock }) };
}

describe('partition writer states', () => {
  it('writer: accepting takes a batch; closing and closed refuse one with LogClosedError', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    assert.equal(writer.state, 'accepting');
    assert.equal((await writer.append(batchOf([rec(0)]), AckPolicy.WRITTEN)).baseOffset, 0);
    const closed = writer.close();
    assert.equal(writer.state, 'closing');
    await assert.rejects(writer.append(batchOf([rec(1)]), AckPolicy.WRITTEN), LogClosedError);
    await closed;
    assert.equal(writer.state, 'closed');
    await assert.rejects(writer.append(batchOf([rec(2)]), AckPolicy.WRITTEN), LogClosedError);
    assert.equal(log.logEndOffset, 1, 'nothing refused was stored');
  });

  it('writer: a second close while closing resolves too, and leaves the writer closed', async (t) => {
    const { log, writer } = openWriter(tempDir(t));
    t.after(() => log.close());
    await Promise.all([writer.close(), writer.close()]);
    assert.equal(writer.state, 'closed');
  });

  it('flush policy: flushEveryMs syncs written records on the clock, not before', async (t) => {
    const { log, clock, writer } = openWriter(tempDir(t), { flushEveryMs: 50 });
    t.after(() => log.close());
    await writer.append(batchOf([rec(0)]), AckPolicy.WRITTEN);
    clock.advance(49);
    assert.equal(writer.stats.flushSyncs, 0, 'no flush before its interval');
    clock.advance(1);
    assert.equal(writer.stats.flushSyncs, 1);
    await writer.close();
    assert.equal(clock.pendingTimers, 0, 'close stops the flush timer');
  });
});
