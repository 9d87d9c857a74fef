import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Partition } from '@booblik/log';
import { ErrorCode, type ReplicateAnswer, ReplicateFlag, type ReplicateRequest } from '@booblik/protocol';
import { ReplicaSide } from './replica-side.js';

/** A replica's log of `end` records, all of epoch 2. */
function fakePartition(end: number) {
  const p = {
    name: 't-0',
    logEndOffset: end,
    localStartOffset: 0,
    published: [] as number[],
    epochs: {
      latestEpoch: 2,
      entries: [{ epoch: 2, startOffset: 0 }],
      epochAt: () => 2,
      begin(epoch: number) {
        p.epochs.latestEpoch = epoch;
      },
    },
    publishCommitted(offset: number) {
      p.published.push(offset);
    },
    truncateTo(offset: number) {
      p.logEndOffset = offset;
    },
    writeReplicated: async (base: number, _stored: Buffer, count: number) => {
      p.logEndOffset = base + count;
    },
  };
  return p;
}

function request(r: Partial<ReplicateRequest>): ReplicateRequest {
  return {
    topic: 't',
    partition: 0,
    epoch: 2,
    recordsEpoch: 2,
    baseOffset: 0,
    prevEpoch: 2,
    commitOffset: 0,
    flags: 0,
    count: 0,
    stored: Buffer.alloc(0),
    ...r,
  };
}

describe('replica side', () => {
  test('a primary of an older epoch than the replica knows is refused', () => {
    const p = fakePartition(5);
    const side = new ReplicaSide(p as unknown as Partition, 3);
    const answer = side.handle(request({ epoch: 2, baseOffset: 5 })) as ReplicateAnswer;
    assert.equal(answer.code, ErrorCode.STALE_EPOCH);
    assert.equal(answer.knownEpoch, 3);
    assert.deepEqual(p.published, [], 'its commit offset is not taken');
  });

  test('a request of a later epoch raises the epoch the replica knows', () => {
    const p = fakePartition(5);
    const side = new ReplicaSide(p as unknown as Partition, 2);
    side.handle(request({ epoch: 4, baseOffset: 5, commitOffset: 5 }));
    assert.equal(side.knownEpoch, 4);
    const stale = side.handle(request({ epoch: 3, baseOffset: 5 })) as ReplicateAnswer;
    assert.equal(stale.code, ErrorCode.STALE_EPOCH, 'the epoch never goes back');
  });

  test('the cluster record of an older epoch does not lower the epoch known', () => {
    const side = new ReplicaSide(fakePartition(0) as unknown as Partition, 5);
    side.learnEpoch(3);
    assert.equal(side.knownEpoch, 5);
    side.learnEpoch(6);
    assert.equal(side.knownEpoch, 6);
  });

  test('a heartbeat publishes the commit offset, and reads may be served in its epoch', () => {
    const p = fakePartition(5);
    const side = new ReplicaSide(p as unknown as Partition, 2);
    assert.equal(side.hasCommitFrom(2), false);
    const answer = side.handle(request({ baseOffset: 5, commitOffset: 9 })) as ReplicateAnswer;
    assert.equal(answer.code, ErrorCode.NONE);
    assert.deepEqual(p.published, [5], 'never past its own end');
    assert.equal(side.hasCommitFrom(2), true);
  });

  test('a request that does not join on its end is told where the end is', () => {
    const side = new ReplicaSide(fakePartition(5) as unknown as Partition, 2);
    const answer = side.handle(request({ baseOffset: 7 })) as ReplicateAnswer;
    assert.equal(answer.code, ErrorCode.OFFSET_MISMATCH);
    assert.equal(answer.logEndOffset, 5);
  });

  test('a truncation cuts the log back to where it diverged', () => {
    const p = fakePartition(8);
    const side = new ReplicaSide(p as unknown as Partition, 2);
    const answer = side.handle(request({ baseOffset: 5, flags: ReplicateFlag.TRUNCATE })) as ReplicateAnswer;
    assert.equal(answer.code, ErrorCode.NONE);
    assert.equal(p.logEndOffset, 5);
  });

  test('records are written at the primary offsets and answered once written', async () => {
    const p = fakePartition(5);
    const side = new ReplicaSide(p as unknown as Partition, 2);
    const answer = await side.handle(
      request({ baseOffset: 5, count: 3, stored: Buffer.alloc(3), commitOffset: 6 }),
    );
    assert.equal(answer.code, ErrorCode.NONE);
    assert.equal(answer.logEndOffset, 8);
    assert.deepEqual(p.published, [6]);
  });
});
