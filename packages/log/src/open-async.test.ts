import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { PartitionLog } from './partition-log.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';
import { WorkerScanner } from './worker-scanner.js';

/** A partition of `mib` MiB of 64-byte stored records, written straight to its one segment. */
function bigPartition(dir: string, mib: number): number {
  const perMib = (1024 * 1024) / 64;
  const chunk = encodeStoredRecords(Array.from({ length: perMib }, (_, i) => Buffer.alloc(56, i & 0xff)));
  const fd = fs.openSync(path.join(dir, '00000000000000000000.log'), 'w');
  for (let i = 0; i < mib; i++) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  return perMib * mib;
}

/** The longest gap between 1 ms ticks of the event loop while `work` runs. */
async function longestStallMs(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    await work();
    const now = performance.now();
    return Math.max(longest, now - last);
  } finally {
    clearInterval(ticker);
  }
}

describe('opening a partition with the recovery scan in a worker thread', () => {
  it('recovers exactly what a synchronous open recovers, a torn tail cut the same way', async (t) => {
    const dir = tempDir(t);
    const payloads = Array.from({ length: 50 }, (_, i) => rec(i, 20));
    const config = { ...defaultLogConfig, segmentBytesMax: 400, indexIntervalBytes: 64 };
    const { log } = PartitionLog.open(dir, 't-0', config);
    log.writeGroup([batchOf(payloads)]);
    log.publish();
    log.close();
    const last = fs.readdirSync(dir).sort().at(-1)!;
    fs.appendFileSync(path.join(dir, last), Buffer.from([0, 0, 0, 9, 1, 2])); // a torn half-record
    const scanner = new WorkerScanner();
    t.after(() => scanner.close());
    const opened = await PartitionLog.openAsync(dir, 't-0', config, { scan: scanner.scan });
    t.after(() => opened.log.close());
    assert.equal(opened.report.cuts.length, 1, 'the torn tail was cut');
    assert.equal(opened.log.highWatermark.value, 50);
    assert.deepEqual((await readAll(opened.log, 0)).map(String), payloads.map(String));
    // The index built in the worker finds offsets in the middle of segments.
    assert.deepEqual((await readAll(opened.log, 37)).map(String), payloads.slice(37).map(String));
  });

  it('the event loop keeps turning while a large partition recovers', async (t) => {
    const dir = tempDir(t);
    const records = bigPartition(dir, 512);
    const config = { ...defaultLogConfig, tailCacheBytes: 0 };
    // The synchronous open is the baseline: it holds the loop for the whole scan.
    const started = performance.now();
    PartitionLog.open(dir, 't-0', config).log.close();
    const syncMs = performance.now() - started;

    const scanner = new WorkerScanner();
    t.after(() => scanner.close());
    let opened: Awaited<ReturnType<typeof PartitionLog.openAsync>> | undefined;
    const stallMs = await longestStallMs(async () => {
      opened = await PartitionLog.openAsync(dir, 't-0', config, { scan: scanner.scan });
    });
    t.after(() => opened?.log.close());
    assert.equal(opened!.log.highWatermark.value, records);
    // Relative to the synchronous scan in the same run, so a loaded machine's own hiccups (tens of
    // ms) do not fail it, while a scan back on the loop (a stall as long as the sync open) does.
    assert.ok(
      stallMs < Math.max(80, syncMs / 2),
      `the loop stalled ${stallMs.toFixed(1)} ms during a ${syncMs.toFixed(1)} ms recovery`,
    );
  });
});
