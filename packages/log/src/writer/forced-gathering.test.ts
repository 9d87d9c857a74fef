import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy, encodeStoredRecords } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { defaultLogConfig } from '../config.js';
import { PartitionLog } from '../partition-log.js';
import { FORCED_GATHER_MS_MAX, PartitionWriter } from '../partition-writer.js';
import { MemoryFiles } from '../test-support/memory-files.js';
import { batchOf, rec } from '../test-support/records.js';

/** A writer on a manual clock whose fdatasyncs each run once the test releases them. */
function openWriter() {
  const { log } = PartitionLog.open('/memory/t-0', 't-0', defaultLogConfig, { files: new MemoryFiles() });
  const clock = new ManualClock();
  const writer = new PartitionWriter(log, { clock });
  const sync = log.sync.bind(log);
  const barriers: (() => void)[] = [];
  log.sync = () => new Promise<void>((ok, fail) => barriers.push(() => sync().then(ok, fail)));
  return { writer, clock, barriers };
}

const turn = () => new Promise((r) => setImmediate(r));

/** Two FORCED producers acknowledged together, now on the clock. */
async function twoAcknowledged(writer: PartitionWriter, barriers: (() => void)[]): Promise<void> {
  const both = [0, 1].map((i) => writer.append(batchOf([rec(i)]), AckPolicy.FORCED));
  await turn();
  assert.equal(barriers.length, 1, 'both in one barrier');
  barriers[0]!();
  await Promise.all(both);
}

describe('FORCED gather hold, on a manual clock', () => {
  it('gather: a FORCED batch waits for the producers just acknowledged at most FORCED_GATHER_MS_MAX, then its barrier starts', async () => {
    const { writer, clock, barriers } = openWriter();
    await twoAcknowledged(writer, barriers);
    const again = writer.append(batchOf([rec(2)]), AckPolicy.FORCED); // the other producer stays away
    await turn();
    assert.equal(barriers.length, 1, 'held for the producer expected back');
    assert.deepEqual(clock.pendingDelays, [FORCED_GATHER_MS_MAX]);
    clock.advance(FORCED_GATHER_MS_MAX / 2);
    assert.equal(barriers.length, 1, 'started before the hold ended');
    clock.advance(FORCED_GATHER_MS_MAX / 2);
    assert.equal(barriers.length, 2, 'still held once the hold ended');
    assert.equal(clock.pendingTimers, 0);
    barriers[1]!();
    await again;
  });

  it('gather: the hold is counted from the acknowledgement, not from the batch that waits', async () => {
    const { writer, clock, barriers } = openWriter();
    await twoAcknowledged(writer, barriers);
    clock.advance(FORCED_GATHER_MS_MAX * 0.75); // the producer takes this long to come back
    const again = writer.append(batchOf([rec(2)]), AckPolicy.FORCED);
    await turn();
    assert.deepEqual(clock.pendingDelays, [FORCED_GATHER_MS_MAX * 0.25], 'held for what is left');
    clock.advance(FORCED_GATHER_MS_MAX * 0.25);
    assert.equal(barriers.length, 2);
    barriers[1]!();
    await again;
  });

  it('gather: a producer that comes back late is not held at all', async () => {
    const { writer, clock, barriers } = openWriter();
    await twoAcknowledged(writer, barriers);
    clock.advance(FORCED_GATHER_MS_MAX);
    const again = writer.append(batchOf([rec(2)]), AckPolicy.FORCED);
    await turn();
    assert.equal(barriers.length, 2, 'held though the hold had already ended');
    assert.equal(clock.pendingTimers, 0);
    barriers[1]!();
    await again;
  });

  it('gather: the hold ends, without the clock, once every producer acknowledged is back, and they share one barrier', async () => {
    const { writer, barriers } = openWriter();
    await twoAcknowledged(writer, barriers);
    const first = writer.append(batchOf([rec(2)]), AckPolicy.FORCED);
    await turn();
    assert.equal(barriers.length, 1, 'held for the second');
    const second = writer.append(batchOf([rec(3)]), AckPolicy.FORCED);
    await turn();
    assert.equal(barriers.length, 2, 'one barrier for both, started when the second came');
    assert.equal(writer.stats.groups, 2);
    barriers[1]!();
    await Promise.all([first, second]);
  });

  it('gather: close ends a hold at once, writing and syncing what it held', async () => {
    const { writer, clock, barriers } = openWriter();
    await twoAcknowledged(writer, barriers);
    const again = writer.append(batchOf([rec(2)]), AckPolicy.FORCED);
    await turn();
    const closed = writer.close();
    assert.equal(barriers.length, 2, 'close waited for the clock');
    assert.equal(clock.pendingTimers, 0);
    barriers[1]!();
    await Promise.all([again, closed]);
  });

  it('gather: copies a replica took never count as producers coming back: the first FORCED batch after a promotion is not held', async () => {
    const { writer, clock, barriers } = openWriter();
    const copies = [0, 1].map(
      (i) =>
        new Promise<void>((resolve, reject) =>
          writer.writeReplica(i, encodeStoredRecords([rec(i)]), 1, true, {
            appended: () => resolve(),
            failed: reject,
          }),
        ),
    );
    await turn();
    barriers[0]!();
    await Promise.all(copies);
    const forced = writer.append(batchOf([rec(2)]), AckPolicy.FORCED); // promoted: a primary now
    await turn();
    assert.equal(barriers.length, 2, 'held for producers that were never here');
    assert.equal(clock.pendingTimers, 0);
    barriers[1]!();
    await forced;
  });
});
