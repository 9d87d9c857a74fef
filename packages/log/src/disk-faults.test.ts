import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultLogConfig, type LogConfig } from './config.js';
import { StorageError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { segmentFileName } from './segment-name.js';
import { MemoryFiles } from './test-support/memory-files.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

const DIR = '/memory/topic-0';
const STORED_BYTES = 8 + 20; // one rec(i, 20) in the segment: size, CRC, payload

function openOn(files: MemoryFiles, config: Partial<LogConfig> = {}) {
  return PartitionLog.open(DIR, 'topic-0', { ...defaultLogConfig, ...config }, { files });
}

function append(log: PartitionLog, from: number, count: number): void {
  const records = Array.from({ length: count }, (_, i) => rec(from + i, 20));
  log.writeGroup([batchOf(records)]);
  log.publish();
}

const labels = (records: Buffer[]) => records.map((r) => r.toString().replace(/\.+$/, ''));

describe('disk faults, on in-memory files', () => {
  it('log: an append that hits EIO is refused and leaves nothing readable, not even a partial write', async () => {
    const files = new MemoryFiles();
    const { log } = openOn(files);
    append(log, 0, 2);
    const sizeBefore = log.sizeBytes;
    files.shortWrite(1, 10); // some bytes land, then the disk fails the rest
    files.failWrite(2);
    assert.throws(
      () => log.writeGroup([batchOf([rec(2, 20), rec(3, 20)])]),
      (e) => e instanceof StorageError && e.code === 'EIO',
    );
    log.publish();
    assert.equal(log.logEndOffset, 2);
    assert.equal(log.highWatermark.value, 2);
    assert.equal(files.contents(`${DIR}/${segmentFileName(0)}`).length, sizeBefore);
    append(log, 2, 1);
    assert.deepEqual(labels(await readAll(log, 0)), ['record-0', 'record-1', 'record-2']);
  });

  it('log: ENOSPC on a roll takes the whole group back and leaves no new segment', async () => {
    const files = new MemoryFiles();
    const { log } = openOn(files, { segmentBytesMax: 3 * STORED_BYTES });
    append(log, 0, 2);
    // The group's first record fits the active segment; the second rolls into a new one, and the
    // disk is full by then.
    files.limitBytes(files.usedBytes() + STORED_BYTES + 5);
    assert.throws(
      () => log.writeGroup([batchOf([rec(2, 20), rec(3, 20)])]),
      (e) => e instanceof StorageError && e.code === 'ENOSPC',
    );
    log.publish();
    assert.equal(log.logEndOffset, 2);
    assert.equal(log.segmentCount, 1);
    assert.equal(files.list(DIR).length, 1);
    assert.equal(files.usedBytes(), 2 * STORED_BYTES);
    files.limitBytes(Number.POSITIVE_INFINITY);
    append(log, 2, 2);
    assert.equal(log.segmentCount, 2);
    assert.deepEqual(labels(await readAll(log, 0)), ['record-0', 'record-1', 'record-2', 'record-3']);
  });

  it('log: a short write is carried on to the end, so the record is whole on disk and readable', async () => {
    const files = new MemoryFiles();
    const { log } = openOn(files);
    files.shortWrite(1, 7);
    append(log, 0, 3);
    await log.sync();
    log.close();
    const { log: reopened, report } = openOn(files.crash());
    assert.deepEqual(report.cuts, []);
    assert.deepEqual(labels(await readAll(reopened, 0)), ['record-0', 'record-1', 'record-2']);
  });

  it('log: an fdatasync that fails with EIO is a StorageError, not a silent success', async () => {
    const files = new MemoryFiles();
    const { log } = openOn(files);
    append(log, 0, 1);
    files.failSync(1);
    await assert.rejects(log.sync(), (e) => e instanceof StorageError && e.code === 'EIO');
  });

  it('recovery: after a crash that lost unsynced bytes, every synced record stays and the torn tail is cut', async () => {
    const files = new MemoryFiles();
    const { log } = openOn(files);
    append(log, 0, 3);
    await log.sync();
    append(log, 3, 2); // written, never synced: the crash loses them but for a torn first few bytes
    const restarted = files.crash({ keepUnsyncedBytes: STORED_BYTES + 5 });
    const { log: recovered, report } = openOn(restarted);
    assert.equal(recovered.logEndOffset, 4);
    assert.equal(report.cuts.length, 1);
    assert.equal(report.cuts[0]!.offset, 4);
    assert.equal(report.cuts[0]!.bytes, 5);
    assert.deepEqual(labels(await readAll(recovered, 0)), ['record-0', 'record-1', 'record-2', 'record-3']);
    // The cut is durable: a second crash right after recovery finds the same log, nothing to cut.
    const { log: again, report: second } = openOn(restarted.crash());
    assert.equal(again.logEndOffset, 4);
    assert.deepEqual(second.cuts, []);
  });
});
