import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import { PartitionLog } from './partition-log.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

const SEGMENT0 = '00000000000000000000.log';

function open(dir: string, config: Partial<LogConfig> = {}) {
  return PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...config });
}

/** Writes n records (record-0 .. record-{n-1}, 20 bytes each) to a fresh partition and closes it. */
function writeRecords(dir: string, n: number): Buffer[] {
  const payloads = Array.from({ length: n }, (_, i) => rec(i, 20));
  const { log } = open(dir);
  log.writeGroup([batchOf(payloads)]);
  log.publish();
  log.close();
  return payloads;
}

const recordBytes = 28; // 8-byte header + 20

describe('recovery', () => {
  it('a bit flipped inside record k of n ends the log at k and cuts the file there', async (t) => {
    for (const k of [0, 3, 6]) {
      const dir = tempDir(t);
      const payloads = writeRecords(dir, 7);
      const file = path.join(dir, SEGMENT0);
      const bytes = fs.readFileSync(file);
      bytes[k * recordBytes + 8 + 5]! ^= 0x10; // inside record k's payload
      fs.writeFileSync(file, bytes);
      const { log, report } = open(dir);
      assert.equal(log.highWatermark.value, k, `k=${k}`);
      assert.equal(fs.statSync(file).size, k * recordBytes, 'the file is cut at the bad record');
      assert.deepEqual(report.cuts, [
        { segmentBaseOffset: 0, offset: k, bytes: (7 - k) * recordBytes, reason: 'crc-mismatch' },
      ]);
      assert.deepEqual(await readAll(log, 0), payloads.slice(0, k));
      log.close();
    }
  });

  it('a header claiming more bytes than the file holds is a torn tail: cut', (t) => {
    const dir = tempDir(t);
    writeRecords(dir, 3);
    const file = path.join(dir, SEGMENT0);
    const bytes = fs.readFileSync(file);
    bytes.writeInt32BE(1000, 2 * recordBytes);
    fs.writeFileSync(file, bytes);
    const { log, report } = open(dir);
    t.after(() => log.close());
    assert.equal(log.highWatermark.value, 2);
    assert.equal(report.cuts[0]!.reason, 'past-end');
  });

  it('a zero length mid-file ends the log there (what a crash leaves in a preallocated page)', (t) => {
    const dir = tempDir(t);
    writeRecords(dir, 4);
    const file = path.join(dir, SEGMENT0);
    const bytes = fs.readFileSync(file);
    bytes.fill(0, recordBytes, 2 * recordBytes);
    fs.writeFileSync(file, bytes);
    const { log, report } = open(dir);
    t.after(() => log.close());
    assert.equal(log.highWatermark.value, 1);
    assert.equal(report.cuts[0]!.reason, 'bad-size');
  });

  it('fewer than 8 bytes at the end are a torn header: cut', (t) => {
    const dir = tempDir(t);
    writeRecords(dir, 2);
    fs.appendFileSync(path.join(dir, SEGMENT0), Buffer.from([0, 0, 0, 5, 1]));
    const { log, report } = open(dir);
    t.after(() => log.close());
    assert.equal(log.highWatermark.value, 2);
    assert.deepEqual(report.cuts[0], { segmentBaseOffset: 0, offset: 2, bytes: 5, reason: 'short-header' });
  });

  it('stale tail: after a cut at k, a new append of the same size does not bring records after k back', async (t) => {
    const dir = tempDir(t);
    const payloads = writeRecords(dir, 5);
    const file = path.join(dir, SEGMENT0);
    const bytes = fs.readFileSync(file);
    bytes[2 * recordBytes + 4]! ^= 0x01; // record 2's stored CRC
    fs.writeFileSync(file, bytes);
    const first = open(dir).log;
    const replacement = rec('new', 20); // exactly record 2's size: without the cut, 3 and 4 would follow it
    first.writeGroup([batchOf([replacement])]);
    first.publish();
    first.close();
    const { log } = open(dir);
    t.after(() => log.close());
    assert.deepEqual(await readAll(log, 0), [payloads[0], payloads[1], replacement]);
    assert.equal(log.highWatermark.value, 3);
  });

  it('a data directory written by another booblik broker opens: segments by name, records by layout', async (t) => {
    const dir = tempDir(t);
    const a = [Buffer.from('one'), Buffer.from('two'), Buffer.from('three')];
    const b = [Buffer.from('four'), Buffer.from([0x00])];
    fs.writeFileSync(path.join(dir, SEGMENT0), encodeStoredRecords(a));
    fs.writeFileSync(path.join(dir, '00000000000000000003.log'), encodeStoredRecords(b));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a segment');
    const { log, report } = open(dir);
    t.after(() => log.close());
    assert.deepEqual([report.segments, report.logStartOffset, report.logEndOffset], [2, 0, 5]);
    assert.deepEqual(await readAll(log, 0), [...a, ...b]);
  });

  it('a corrupt record in an older segment ends the log there: later segments are removed, offsets stay contiguous', async (t) => {
    const dir = tempDir(t);
    const a = [rec(0), rec(1), rec(2)];
    fs.writeFileSync(path.join(dir, SEGMENT0), encodeStoredRecords(a));
    fs.writeFileSync(path.join(dir, '00000000000000000003.log'), encodeStoredRecords([rec(3)]));
    const bytes = fs.readFileSync(path.join(dir, SEGMENT0));
    bytes[bytes.length - 1]! ^= 0xff;
    fs.writeFileSync(path.join(dir, SEGMENT0), bytes);
    const { log, report } = open(dir);
    t.after(() => log.close());
    assert.equal(log.highWatermark.value, 2);
    assert.deepEqual(
      report.cuts.map((c) => c.reason),
      ['crc-mismatch', 'after-earlier-cut'],
    );
    assert.deepEqual(
      fs.readdirSync(dir).filter((n) => n.endsWith('.log')),
      [SEGMENT0],
    );
    assert.deepEqual(await readAll(log, 0), [rec(0), rec(1)]);
  });

  it('a gap between segments (a missing file) ends the log before the gap', (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, SEGMENT0), encodeStoredRecords([rec(0)]));
    fs.writeFileSync(path.join(dir, '00000000000000000005.log'), encodeStoredRecords([rec(5)]));
    const { log } = open(dir);
    t.after(() => log.close());
    assert.equal(log.highWatermark.value, 1);
  });

  it('recovery crosses its own read size: a segment larger than one read is checked whole', async (t) => {
    const dir = tempDir(t);
    // 9 MiB of 100 KiB records: the 8 MiB read boundary falls inside a record.
    const payloads = Array.from({ length: 92 }, (_, i) => Buffer.alloc(100 * 1024, i));
    fs.writeFileSync(path.join(dir, SEGMENT0), encodeStoredRecords(payloads));
    const { log } = open(dir);
    t.after(() => log.close());
    assert.equal(log.highWatermark.value, 92);
    const last = await log.read(91, 200 * 1024);
    assert.equal(last.bytes, 8 + 100 * 1024);
  });
});
