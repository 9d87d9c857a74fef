/** A replica asked to cut its log back: what the log refuses is told to the primary, by type. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Partition, TruncationRefusedError } from '@booblik/log';
import { ErrorCode, type ReplicateAnswer, ReplicateFlag, type ReplicateRequest } from '@booblik/protocol';
import { ReplicaSide } from './replica-side.js';

/** A replica's log of 8 records whose truncation fails with `failure`. */
function refusingPartition(failure: Error) {
  return {
    name: 't-0',
    logEndOffset: 8,
    epochs: { latestEpoch: 2, entries: [{ epoch: 2, startOffset: 0 }], epochAt: () => 2 },
    truncateTo() {
      throw failure;
    },
  } as unknown as Partition;
}

const truncate: ReplicateRequest = {
  topic: 't',
  partition: 0,
  epoch: 2,
  recordsEpoch: 2,
  baseOffset: 3,
  prevEpoch: 2,
  commitOffset: 0,
  flags: ReplicateFlag.TRUNCATE,
  count: 0,
  stored: Buffer.alloc(0),
};

describe('replica side: a refused truncation', () => {
  test('replica: a truncation below what readers may have seen is answered OFFSET_MISMATCH', () => {
    const refusal = new TruncationRefusedError(3, 'truncateTo: offset 3, expected 5..8');
    const side = new ReplicaSide(refusingPartition(refusal), 2);
    const answer = side.handle(truncate) as ReplicateAnswer;
    assert.equal(answer.code, ErrorCode.OFFSET_MISMATCH);
  });

  test('replica: any other failure of a truncation is thrown, not answered as a mismatch', () => {
    const bug = new RangeError('count: 0, expected >= 1');
    const side = new ReplicaSide(refusingPartition(bug), 2);
    assert.throws(() => side.handle(truncate), bug);
  });
});
