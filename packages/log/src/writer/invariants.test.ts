import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, InvariantError } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from '../config.js';
import { LogClosedError } from '../errors.js';
import { PartitionLog } from '../partition-log.js';
import { PartitionWriter } from '../partition-writer.js';
import { batchOf, rec } from '../test-support/records.js';
import { brokenBeforeAcknowledging } from './invariants.js';
import type { Group } from './types.js';

function group(endOffset: number, extra: Partial<Group> = {}): Group {
  const fields = {
    bases: [],
    forced: 0,
    state: 'durable' as const,
    syncError: null,
    underGate: false,
    replica: false,
  };
  return { members: [], endOffset, ...fields, ...extra };
}

const log = { name: 't-0', logEndOffset: 10 };

describe('writer invariants', () => {
  it('invariant: the acknowledged end never passes the log end', () => {
    assert.equal(brokenBeforeAcknowledging(log, group(10), 0), null);
    assert.match(String(brokenBeforeAcknowledging(log, group(11), 0)), /past the log end 10/);
  });

  it('invariant: the high watermark a primary publishes never goes back', () => {
    assert.equal(brokenBeforeAcknowledging(log, group(7), 7), null);
    assert.match(String(brokenBeforeAcknowledging(log, group(6), 7)), /would go back from 7 to 6/);
    assert.equal(
      brokenBeforeAcknowledging(log, group(6, { replica: true }), 7),
      null,
      'a replica does not publish',
    );
  });

  it('writer: a broken invariant stops the writer and fails what waits, never acknowledges', async (t) => {
    const { log: real } = PartitionLog.open(tempDir(t), 't-0', defaultLogConfig);
    t.after(() => real.close());
    const writer = new PartitionWriter(real, { clock: new ManualClock() });
    const barriers: (() => void)[] = [];
    real.sync = () => new Promise<void>((release) => barriers.push(release));
    const forced = writer.append(batchOf([rec(0)]), AckPolicy.FORCED);
    await new Promise((r) => setImmediate(r));
    // The log end seen at acknowledgement falls below the group's end: something cut it behind the writer.
    Object.defineProperty(real, 'logEndOffset', { get: () => 0 });
    barriers[0]!();
    await assert.rejects(forced, InvariantError);
    assert.equal(real.highWatermark.value, 0, 'nothing published');
    assert.equal(writer.state, 'closing');
    await assert.rejects(writer.append(batchOf([rec(1)]), AckPolicy.WRITTEN), LogClosedError);
  });
});
