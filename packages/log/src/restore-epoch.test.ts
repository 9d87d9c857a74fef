import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import type { Fragment, StoredPast } from './fragment.js';
import type { Logger } from './logger.js';
import { Partition } from './partition.js';
import { MemorySource, persistAll } from './test-support/memory-source.js';
import { batchOf, rec } from './test-support/records.js';

const SMALL: LogConfig = {
  ...defaultLogConfig,
  segmentBytesMax: 300,
  indexIntervalBytes: 40,
  tailCacheBytes: 0,
};

function logged(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
}

/**
 * A partition that wrote `count` records, had its closed segments persisted, then lost its disk:
 * the store's fragments, and what the active segment held past them.
 */
async function lostDisk(t: TestContext, count: number) {
  const source = new MemorySource();
  const dataDir = tempDir(t);
  const { partition } = Partition.open(dataDir, 't', 0, SMALL, { remote: { source, fragments: [] } });
  for (let i = 0; i < count; i++) await partition.append(batchOf([rec(i, 30)]), AckPolicy.WRITTEN);
  const fragments = persistAll(partition, source);
  const storeEnd = fragments.at(-1)!.endOffset;
  const highWatermark = partition.highWatermark.value;
  assert.ok(highWatermark > storeEnd, 'the active segment holds records the store does not');
  await partition.close();
  return { source, fragments, storeEnd, highWatermark };
}

function restore(t: TestContext, source: MemorySource, fragments: Fragment[], past?: StoredPast) {
  const logger = logged();
  const { partition, report } = Partition.open(tempDir(t), 't', 0, SMALL, {
    logger,
    remote: { source, fragments, ...(past === undefined ? {} : { past }) },
  });
  t.after(() => partition.close());
  return { partition, report, lines: logger.lines };
}

describe('restore on an empty disk', () => {
  it('begins the next epoch where the store ends and logs exactly the offsets known lost', async (t) => {
    const { source, fragments, storeEnd, highWatermark } = await lostDisk(t, 40);
    const { partition, report, lines } = restore(t, source, fragments, { epochs: [], highWatermark });
    assert.deepEqual(report.restore, { epoch: 1, restoredAt: storeEnd, lostEndOffset: highWatermark });
    assert.deepEqual(partition.epochs.entries, [{ epoch: 1, startOffset: storeEnd }]);
    // A reader that read epoch 0 up to a position past storeEnd: its epoch ends before it.
    assert.deepEqual(partition.epochs.endOf(0, partition.logEndOffset), { epoch: 0, endOffset: storeEnd });
    const line = lines.find((l) => l.includes('restored from the store on an empty disk')) ?? '';
    assert.ok(line.startsWith('WARN '), lines.join('\n'));
    assert.match(line, new RegExp(`offsets ${storeEnd}\\.\\.${highWatermark} were readable and are lost`));
    assert.match(line, new RegExp(`new records from offset ${storeEnd} are epoch 1`));
  });

  it("a second restore takes the store's epochs and begins the one after the newest", async (t) => {
    const { source, fragments, storeEnd } = await lostDisk(t, 40);
    const past = { epochs: [{ epoch: 1, startOffset: 3 }], highWatermark: storeEnd };
    const { partition, report, lines } = restore(t, source, fragments, past);
    assert.equal(report.restore?.epoch, 2);
    assert.equal(report.restore?.lostEndOffset, null, 'nothing readable is known lost past the store');
    assert.deepEqual(partition.epochs.entries, [
      { epoch: 1, startOffset: 3 },
      { epoch: 2, startOffset: storeEnd },
    ]);
    assert.ok(lines.some((l) => /records written after its last update are lost/.test(l)));
  });

  it("without the store's past (a cluster numbers epochs by its terms) it begins no epoch", async (t) => {
    const { source, fragments, storeEnd } = await lostDisk(t, 40);
    const { partition, report, lines } = restore(t, source, fragments);
    assert.equal(report.restore, null);
    assert.equal(report.restoredAt, storeEnd);
    assert.deepEqual(partition.epochs.entries, []);
    assert.ok(lines.includes(`INFO t-0: restored from the store: offsets 0..${storeEnd} are read from it`));
  });

  it('a partition that opens on its own records begins no epoch', async (t) => {
    const source = new MemorySource();
    const dataDir = tempDir(t);
    const first = Partition.open(dataDir, 't', 0, SMALL, { remote: { source, fragments: [] } });
    await first.partition.append(batchOf([rec('kept')]), AckPolicy.WRITTEN);
    await first.partition.close();
    const again = Partition.open(dataDir, 't', 0, SMALL, {
      remote: { source, fragments: [], past: { epochs: [], highWatermark: 1 } },
    });
    t.after(() => again.partition.close());
    assert.equal(again.report.restore, null);
    assert.deepEqual(again.partition.epochs.entries, []);
  });
});
