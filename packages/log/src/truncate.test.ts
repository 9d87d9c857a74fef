import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import { TruncationRefusedError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { readAll } from './test-support/read-all.js';
import { payloadsOf, rec } from './test-support/records.js';

/** 20-byte payloads, 28 bytes stored: a 90-byte segment holds three. */
const SEGMENT_OF_THREE = { segmentBytesMax: 90, indexIntervalBytes: 30, tailCacheBytes: 0 };
const payload = (i: number) => rec(i, 20);

function open(dir: string, config: Partial<LogConfig> = SEGMENT_OF_THREE) {
  return PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...config }).log;
}

/** Writes records [from, to) as groups of `groupSize`. */
function write(log: PartitionLog, from: number, to: number, groupSize = 2, make = payload): void {
  for (let i = from; i < to; i += groupSize) {
    const payloads = Array.from({ length: Math.min(groupSize, to - i) }, (_, k) => make(i + k));
    log.writeStoredGroup(i, encodeStoredRecords(payloads), payloads.length);
  }
}

const range = (from: number, to: number, make = payload) =>
  Array.from({ length: to - from }, (_, i) => make(from + i));

/** Records of another size than `payload`'s, so a stale index position would land inside one. */
const small = (i: number) => rec(`new-${i}`, 3 + (i % 4));

function segmentFiles(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of fs.readdirSync(dir).sort()) out[f] = fs.statSync(path.join(dir, f)).size;
  return out;
}

const name = (base: number) => `${String(base).padStart(20, '0')}.log`;

describe('truncation at runtime', () => {
  it('inside a segment: the records from the offset on are gone, later writes land there and read back', async (t) => {
    const dir = tempDir(t);
    const log = open(dir, { indexIntervalBytes: 30, tailCacheBytes: 0 });
    t.after(() => log.close());
    write(log, 0, 4);
    log.publish();
    write(log, 4, 20);
    log.truncateTo(11);
    assert.equal(log.logEndOffset, 11);
    assert.deepEqual(segmentFiles(dir), { [name(0)]: 11 * 28 }, 'the file is cut at record 11');
    write(log, 11, 20, 3, small); // other sizes: an index entry left from before would point inside a record
    log.publish();
    assert.equal(log.highWatermark.value, 20);
    const expected = [...range(0, 11), ...range(11, 20, small)];
    for (let offset = 0; offset < 20; offset++) {
      assert.deepEqual(await readAll(log, offset, 30), expected.slice(offset), `read from ${offset}`);
    }
  });

  it('at a segment boundary: the segments from it on are removed and the next write starts a new one', async (t) => {
    const dir = tempDir(t);
    const log = open(dir);
    t.after(() => log.close());
    write(log, 0, 3, 3);
    log.publish();
    write(log, 3, 12, 3);
    log.truncateTo(6);
    assert.deepEqual(segmentFiles(dir), { [name(0)]: 84, [name(3)]: 84 });
    write(log, 6, 8);
    log.publish();
    assert.deepEqual(segmentFiles(dir), { [name(0)]: 84, [name(3)]: 84, [name(6)]: 56 });
    assert.deepEqual(await readAll(log, 0, 70), range(0, 8));
  });

  it('across several segments, and down to an empty log: reads, writes and the index agree afterwards', async (t) => {
    const dir = tempDir(t);
    const log = open(dir);
    t.after(() => log.close());
    write(log, 0, 14);
    log.truncateTo(4);
    assert.deepEqual(segmentFiles(dir), { [name(0)]: 84, [name(3)]: 28 });
    log.truncateTo(0);
    assert.deepEqual(segmentFiles(dir), { [name(0)]: 0 });
    assert.equal(log.logEndOffset, 0);
    write(log, 0, 10, 3, small);
    log.publish();
    for (let offset = 0; offset < 10; offset++) {
      assert.deepEqual(await readAll(log, offset, 30), range(offset, 10, small), `read from ${offset}`);
    }
  });

  it('a group cut by the truncation keeps its records below the offset, published by the next publish', async (t) => {
    const log = open(tempDir(t), { tailCacheBytes: 1 << 20 });
    t.after(() => log.close());
    write(log, 0, 2);
    log.publish();
    write(log, 2, 8, 6); // one group [2, 8)
    write(log, 8, 10); // a group wholly past the cut
    log.truncateTo(5);
    log.publishCommitted(5);
    assert.equal(log.highWatermark.value, 5);
    assert.deepEqual(await readAll(log, 0), range(0, 5), 'from the tail cache, cut with its group');
    write(log, 5, 10, 2, small);
    log.publish();
    assert.deepEqual(await readAll(log, 0), [...range(0, 5), ...range(5, 10, small)], 'no stale group');
  });

  it('reopening after a truncation shows the same log: recovery finds nothing to cut', async (t) => {
    const dir = tempDir(t);
    const log = open(dir);
    write(log, 0, 4);
    log.publish();
    write(log, 4, 14);
    log.truncateTo(7);
    const files = segmentFiles(dir);
    log.close();
    const { log: again, report } = PartitionLog.open(dir, 't-0', {
      ...defaultLogConfig,
      ...SEGMENT_OF_THREE,
    });
    t.after(() => again.close());
    assert.deepEqual(report.cuts, []);
    assert.equal(again.logEndOffset, 7);
    assert.deepEqual(segmentFiles(dir), files);
    assert.deepEqual(await readAll(again, 0, 70), range(0, 7));
  });

  it('refuses below the high watermark (a reader may have seen it) and past the log end, changing nothing', async (t) => {
    const dir = tempDir(t);
    const log = open(dir);
    t.after(() => log.close());
    write(log, 0, 6);
    log.publishCommitted(4);
    write(log, 6, 8);
    const files = segmentFiles(dir);
    for (const offset of [3, 0, 9, -1, 4.5]) {
      assert.throws(() => log.truncateTo(offset), TruncationRefusedError, `offset ${offset}`);
    }
    assert.equal(log.logEndOffset, 8);
    assert.deepEqual(segmentFiles(dir), files);
    log.truncateTo(4); // at the high watermark itself: allowed
    assert.equal(log.logEndOffset, 4);
    assert.deepEqual(await readAll(log, 0, 70), range(0, 4));
  });

  it('a read under way on a segment being cut completes with the records it asked for', async (t) => {
    const log = open(tempDir(t));
    t.after(() => log.close());
    write(log, 0, 3, 1);
    log.publishCommitted(2);
    const reading = log.read(0, 1000); // from the file: no tail cache
    log.truncateTo(2); // cuts the segment being read
    const result = await reading;
    assert.deepEqual(payloadsOf(result.chunks, 0), range(0, 2));
    result.release?.();
    write(log, 2, 4);
    log.publish();
    assert.deepEqual(await readAll(log, 0, 70), range(0, 4));
  });

  it('a replica reopened at its last known commit offset shows nothing past it, and can still cut its tail', async (t) => {
    const dir = tempDir(t);
    const log = open(dir);
    write(log, 0, 10);
    log.publish();
    log.close();
    const reopen = (highWatermark: number) =>
      PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...SEGMENT_OF_THREE }, { highWatermark }).log;
    const held = reopen(4);
    assert.equal(held.highWatermark.value, 4);
    assert.equal(held.logEndOffset, 10, 'the records past it are kept');
    const whole = await held.read(3, 1 << 20);
    assert.deepEqual(payloadsOf(whole.chunks, 3), range(3, 4), 'a read stops at the high watermark');
    whole.release?.();
    held.publishCommitted(8);
    assert.equal(
      held.highWatermark.value,
      4,
      'the recovered tail is published whole, by a commit that covers it',
    );
    held.truncateTo(7); // the new primary lacks 7.. : cut at runtime, though recovered
    held.publishCommitted(7);
    assert.equal(held.highWatermark.value, 7);
    assert.deepEqual(await readAll(held, 0, 70), range(0, 7));
    held.close();
    const clamped = reopen(1000);
    t.after(() => clamped.close());
    assert.equal(clamped.highWatermark.value, 7, 'never past the log end');
  });
});
