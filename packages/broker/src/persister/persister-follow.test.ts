import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { type AppendBatch, defaultLogConfig, Partition, silentLogger } from '@booblik/log';
import { AckPolicy } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { openStore } from '@booblik/store';
import { tempDir } from '@booblik/testkit';
import { FOLLOW_WAIT_MAX_MS, PartitionPersister } from './partition-persister.js';
import { StoreHealth } from './store-health.js';

const SEGMENT_BYTES = 4096;

function oneRecord(bytes: number): AppendBatch {
  const records = Buffer.alloc(4 + bytes, 0x61);
  records.writeInt32BE(bytes, 0);
  return { records, count: 1 };
}

/** A replica's persister over a store whose primary never uploads: every look finds nothing. */
async function replicaOnly(t: TestContext) {
  const clock = new ManualClock();
  const { partition } = Partition.open(tempDir(t, 'follow-data'), 'orders', 0, {
    ...defaultLogConfig,
    segmentBytesMax: SEGMENT_BYTES,
  });
  const store = await openStore(`file://${tempDir(t, 'follow-store')}`);
  const stats = { uploads: 0, uploadedBytes: 0, storeRequests: 0, failures: 0, deletions: 0 };
  const persister = new PartitionPersister(
    partition,
    store,
    new StoreHealth(silentLogger),
    stats,
    silentLogger,
    undefined,
    () => false,
    clock,
  );
  t.after(async () => {
    await persister.close();
    await partition.close();
  });
  /** Appends until one more segment is closed here. */
  const closeOne = async () => {
    const closed = partition.persistCandidates().length;
    while (partition.persistCandidates().length === closed) {
      await partition.append(oneRecord(1000), AckPolicy.WRITTEN);
    }
  };
  /** Kicks a pass at the clock's time and says whether it read the primary's manifest. */
  const looks = async () => {
    const before = stats.storeRequests;
    persister.kick();
    await persister.idle();
    return stats.storeRequests > before;
  };
  return { clock, closeOne, looks };
}

describe("a replica's looks at its primary's manifest", () => {
  it('back off while nothing closes here, and come back to a second when a segment closes', async (t) => {
    const r = await replicaOnly(t);
    await r.closeOne();
    assert.ok(await r.looks(), 'the first look is at once');
    // Nothing new here, nothing in the store: 1 s, then 2 s, then 4 s between looks.
    for (const waitMs of [1000, 2000, 4000]) {
      r.clock.advance(waitMs - 1);
      assert.equal(await r.looks(), false, `no look before ${waitMs} ms`);
      r.clock.advance(1);
      assert.ok(await r.looks(), `a look after ${waitMs} ms`);
    }
    // The next wait is 8 s; a segment closing here brings the look back to a second after the last.
    r.clock.advance(999);
    await r.closeOne();
    assert.equal(await r.looks(), false, 'not sooner than a second after the last look');
    r.clock.advance(1);
    assert.ok(await r.looks(), 'a second after the last look, with a segment newly closed here');
    // Then it backs off again from a second, never beyond the most.
    r.clock.advance(1000);
    assert.ok(await r.looks(), 'a second later: the wait starts again from one second');
    r.clock.advance(FOLLOW_WAIT_MAX_MS * 4);
    assert.ok(await r.looks());
    r.clock.advance(FOLLOW_WAIT_MAX_MS);
    assert.ok(await r.looks(), `at most ${FOLLOW_WAIT_MAX_MS} ms between looks`);
  });
});
