import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { OffsetMismatchError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { PartitionWriter } from './partition-writer.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

const at = (expectedOffset: number, ...ids: number[]) => ({
  ...batchOf(ids.map((i) => rec(i))),
  expectedOffset,
});

describe('append with an expected offset', () => {
  it('lands at the expected end; a stale expectation is refused with the actual end and writes nothing', async (t) => {
    const { log } = PartitionLog.open(tempDir(t), 't-0', defaultLogConfig);
    const writer = new PartitionWriter(log);
    t.after(() => log.close());
    assert.equal((await writer.append(at(0, 0, 1), AckPolicy.WRITTEN)).baseOffset, 0);
    await assert.rejects(writer.append(at(0, 9), AckPolicy.WRITTEN), (e: unknown) => {
      assert.ok(e instanceof OffsetMismatchError);
      assert.equal(e.logEndOffset, 2);
      return true;
    });
    assert.equal(log.logEndOffset, 2, 'nothing of the refused batch was written');
    assert.equal((await writer.append(at(2, 2), AckPolicy.FORCED)).baseOffset, 2);
  });

  it('in one group, each batch is checked against the end the batches before it leave', async (t) => {
    const { log } = PartitionLog.open(tempDir(t), 't-0', defaultLogConfig);
    const writer = new PartitionWriter(log);
    t.after(() => log.close());
    // Same turn: one group. Two writers both believe the end is 0; only the first gets it.
    const results = await Promise.allSettled([
      writer.append(at(0, 10), AckPolicy.FORCED),
      writer.append(at(0, 20), AckPolicy.FORCED),
      writer.append(at(1, 11), AckPolicy.FORCED),
      writer.append(batchOf([rec(12)]), AckPolicy.FORCED),
    ]);
    assert.deepEqual(
      results.map((r) =>
        r.status === 'fulfilled' ? r.value.baseOffset : (r.reason as OffsetMismatchError).logEndOffset,
      ),
      [0, 1, 1, 2],
    );
    assert.equal(results[1]!.status, 'rejected');
    assert.deepEqual((await readAll(log, 0)).map(String), [rec(10), rec(11), rec(12)].map(String));
  });
});
