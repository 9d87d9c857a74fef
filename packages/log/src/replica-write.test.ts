import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import { CorruptRecordError, OffsetMismatchError, RecordTooLargeError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

function open(dir: string, config: Partial<LogConfig> = {}) {
  return PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...config }).log;
}

/** Every segment file of a directory, by name, with its bytes. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir).sort()) out[f] = fs.readFileSync(path.join(dir, f)).toString('hex');
  return out;
}

/** Asserts that `write` throws `kind` and the log is exactly as before: same end, same file bytes. */
function assertRefusedUnchanged(log: PartitionLog, write: () => void, kind: new (...a: never[]) => Error) {
  const before = { end: log.logEndOffset, files: files(log.dir) };
  assert.throws(write, kind);
  assert.deepEqual({ end: log.logEndOffset, files: files(log.dir) }, before, 'nothing was written');
}

describe('replica write path', () => {
  it('a group written from the primary’s stored bytes gives the same segment files and the same reads', async (t) => {
    const config = { segmentBytesMax: 200, indexIntervalBytes: 40, tailCacheBytes: 0 };
    const primaryDir = tempDir(t);
    const replicaDir = tempDir(t);
    const primary = open(primaryDir, config);
    const replica = open(replicaDir, config);
    t.after(() => {
      primary.close();
      replica.close();
    });
    const payloads = Array.from({ length: 40 }, (_, i) => rec(i, 5 + ((i * 13) % 40)));
    for (let i = 0; i < payloads.length; i += 6) {
      const batches = [batchOf(payloads.slice(i, i + 4)), batchOf(payloads.slice(i + 4, i + 6))];
      const base = primary.logEndOffset;
      primary.writeGroup(batches);
      replica.writeStoredGroup(base, primary.lastWrittenStored, primary.logEndOffset - base);
    }
    primary.publish();
    replica.publish();
    assert.ok(replica.segmentCount > 3, 'the groups rolled segments');
    assert.deepEqual(files(replicaDir), files(primaryDir), 'byte for byte, segment for segment');
    assert.deepEqual(
      await readAll(replica, 0, 60),
      payloads,
      'read from the files, through the sparse index',
    );
  });

  it('a replica’s group is not readable until published, and then is served from the tail cache', async (t) => {
    const log = open(tempDir(t));
    t.after(() => log.close());
    log.writeStoredGroup(0, encodeStoredRecords([rec('a'), rec('b')]), 2);
    assert.equal(log.highWatermark.value, 0);
    assert.deepEqual((await log.read(0, 100)).chunks, []);
    log.publish();
    const now = log.readNow(0, 1 << 20);
    assert.ok(now !== null, 'served from memory, no disk read');
    assert.deepEqual(await readAll(log, 0), [rec('a'), rec('b')]);
  });

  it('a group for another offset than the log end is refused with OffsetMismatchError, nothing written', (t) => {
    const log = open(tempDir(t));
    t.after(() => log.close());
    log.writeStoredGroup(0, encodeStoredRecords([rec(0)]), 1);
    for (const base of [0, 2]) {
      assertRefusedUnchanged(
        log,
        () => log.writeStoredGroup(base, encodeStoredRecords([rec(1)]), 1),
        OffsetMismatchError,
      );
    }
  });

  it('a flipped bit in any record refuses the whole group with CorruptRecordError naming that offset', (t) => {
    const log = open(tempDir(t));
    t.after(() => log.close());
    log.writeStoredGroup(0, encodeStoredRecords([rec('first')]), 1);
    const good = encodeStoredRecords([rec(0, 30), rec(1, 30), rec(2, 30)]);
    for (const k of [0, 1, 2]) {
      const bad = Buffer.from(good);
      bad[k * 38 + 8 + 3]! ^= 0x04; // inside record k's payload
      const before = files(log.dir);
      assert.throws(
        () => log.writeStoredGroup(1, bad, 3),
        (e: unknown) => e instanceof CorruptRecordError && e.offset === 1 + k && e.reason === 'crc-mismatch',
        `record ${k}`,
      );
      assert.deepEqual(files(log.dir), before);
      assert.equal(log.logEndOffset, 1);
    }
  });

  it('bytes that do not frame into exactly count records are refused, nothing written', (t) => {
    const log = open(tempDir(t));
    t.after(() => log.close());
    const three = encodeStoredRecords([rec(0), rec(1), rec(2)]);
    const refusals: [Buffer, number, CorruptRecordError['reason']][] = [
      [three, 4, 'count-mismatch'], // fewer records than declared
      [three, 2, 'count-mismatch'], // bytes left after the declared records
      [three.subarray(0, three.length - 1), 3, 'past-end'], // the last record cut short
      [three.subarray(0, three.length - 11), 3, 'short-header'],
      [Buffer.concat([three, Buffer.alloc(8)]), 4, 'bad-size'], // a zero size
    ];
    for (const [bytes, count, reason] of refusals) {
      assert.throws(
        () => log.writeStoredGroup(0, bytes, count),
        (e: unknown) => e instanceof CorruptRecordError && e.reason === reason,
        `${reason} for count ${count}`,
      );
    }
    assertRefusedUnchanged(log, () => log.writeStoredGroup(0, Buffer.alloc(0), 0), RangeError);
    assert.equal(log.logEndOffset, 0);
    assert.deepEqual(files(log.dir), { '00000000000000000000.log': '' });
  });

  it('a record larger than a whole segment is refused with RecordTooLargeError, nothing written', (t) => {
    const log = open(tempDir(t), { segmentBytesMax: 64 });
    t.after(() => log.close());
    const stored = encodeStoredRecords([rec(0, 10), rec(1, 57)]);
    assertRefusedUnchanged(log, () => log.writeStoredGroup(0, stored, 2), RecordTooLargeError);
  });

  it('publishCommitted publishes only whole groups at or below the commit offset, never past them, never back', async (t) => {
    const log = open(tempDir(t));
    t.after(() => log.close());
    const groups = [
      [rec(0), rec(1), rec(2)],
      [rec(3), rec(4)],
      [rec(5), rec(6), rec(7), rec(8)],
    ];
    for (const g of groups) log.writeStoredGroup(log.logEndOffset, encodeStoredRecords(g), g.length);
    log.publishCommitted(4); // inside the second group
    assert.equal(log.highWatermark.value, 3, 'the end of the first group, not the commit offset');
    assert.deepEqual(await readAll(log, 0), groups[0]);
    log.publishCommitted(2);
    assert.equal(log.highWatermark.value, 3, 'never backwards');
    log.publishCommitted(5);
    assert.equal(log.highWatermark.value, 5);
    log.publishCommitted(1000);
    assert.equal(log.highWatermark.value, 9, 'never past what this log holds');
    assert.deepEqual(await readAll(log, 0), groups.flat());
  });
});
