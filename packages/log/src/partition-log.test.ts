import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import { OffsetOutOfRangeError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, payloadsOf, rec } from './test-support/records.js';

/** Blocks every thread of libuv's pool on a read from a pipe; the function returned lets them go. */
function occupyThreadpool(t: import('node:test').TestContext): () => void {
  const dir = tempDir(t);
  const fds = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, (_, i) => {
    const fifo = path.join(dir, `pipe-${i}`);
    execFileSync('mkfifo', [fifo]);
    const fd = fs.openSync(fifo, fs.constants.O_RDWR); // read-write: opening does not wait for a writer
    fs.read(fd, Buffer.alloc(1), 0, 1, null, () => fs.closeSync(fd));
    return fd;
  });
  return () => {
    for (const fd of fds) fs.writeSync(fd, 'x');
  };
}

function open(dir: string, config: Partial<LogConfig> = {}, now?: () => number) {
  return PartitionLog.open(dir, 't-0', { ...defaultLogConfig, ...config }, now ? { now } : {});
}

function append(log: PartitionLog, payloads: Buffer[]): number {
  const [base] = log.writeGroup([batchOf(payloads)]);
  log.publish();
  return base!;
}

describe('partition log', () => {
  it('readNow serves what needs no disk at once: the tail, the high watermark, a refusal; null for the rest', (t) => {
    const cached = open(tempDir(t)).log;
    const uncached = open(tempDir(t), { tailCacheBytes: 0 }).log;
    t.after(() => {
      cached.close();
      uncached.close();
    });
    for (const log of [cached, uncached]) append(log, [rec('a'), rec('b')]);
    const now = cached.readNow(1, 1 << 20);
    assert.ok(now !== null);
    assert.deepEqual(payloadsOf(now.chunks, 1), [rec('b')]);
    assert.equal(now.highWatermark, 2);
    assert.deepEqual(cached.readNow(2, 1 << 20), { highWatermark: 2, chunks: [], bytes: 0 });
    assert.throws(() => cached.readNow(3, 1 << 20), OffsetOutOfRangeError);
    assert.equal(uncached.readNow(1, 1 << 20), null, 'only in the segment file: read it with read()');
  });

  it('a new partition starts empty at offset 0 with one segment file named by 20 digits', (t) => {
    const dir = tempDir(t);
    const { log, report } = open(dir);
    t.after(() => log.close());
    assert.deepEqual([log.logStartOffset, log.highWatermark.value], [0, 0]);
    assert.deepEqual(fs.readdirSync(dir), ['00000000000000000000.log']);
    assert.equal(report.cuts.length, 0);
  });

  it('records written are stored as size, crc32c, payload: the file is the FETCH payload byte for byte', (t) => {
    const dir = tempDir(t);
    const { log } = open(dir);
    const payloads = [rec(1), rec(2), Buffer.from([0, 0xff])];
    append(log, payloads);
    log.close();
    assert.deepEqual(
      fs.readFileSync(path.join(dir, '00000000000000000000.log')),
      encodeStoredRecords(payloads),
    );
  });

  it('batches in one group land contiguously, each with its base offset', (t) => {
    const { log } = open(tempDir(t));
    t.after(() => log.close());
    const bases = log.writeGroup([batchOf([rec('a'), rec('b')]), batchOf([rec('c')]), batchOf([rec('d')])]);
    assert.deepEqual(bases, [0, 2, 3]);
    assert.equal(log.logEndOffset, 4);
  });

  it('nothing written is readable before publish: the high watermark is the boundary', async (t) => {
    const { log } = open(tempDir(t));
    t.after(() => log.close());
    log.writeGroup([batchOf([rec(1)])]);
    assert.equal(log.highWatermark.value, 0);
    assert.deepEqual((await log.read(0, 100)).chunks, []);
    log.publish();
    assert.equal(log.highWatermark.value, 1);
    assert.deepEqual(payloadsOf((await log.read(0, 100)).chunks, 0), [rec(1)]);
  });

  it('reads from disk and from the in-memory tail return the same bytes at every offset', async (t) => {
    const payloads = Array.from({ length: 60 }, (_, i) => rec(i, 1 + ((i * 37) % 90)));
    const results: string[][] = [];
    for (const tailCacheBytes of [0, 1 << 20]) {
      const { log } = open(tempDir(t), { tailCacheBytes, indexIntervalBytes: 64, segmentBytesMax: 700 });
      for (let i = 0; i < payloads.length; i += 7) append(log, payloads.slice(i, i + 7));
      const reads: string[] = [];
      for (let offset = 0; offset < payloads.length; offset++) {
        for (const maxBytes of [1, 9, 50, 10_000]) {
          const r = await log.read(offset, maxBytes);
          assert.ok(r.bytes <= maxBytes, 'never more than maxBytes');
          reads.push(Buffer.concat(r.chunks).toString('hex'));
        }
        const whole = await log.read(offset, 10_000);
        assert.deepEqual(payloadsOf(whole.chunks, offset)[0], payloads[offset], `record at ${offset}`);
      }
      results.push(reads);
      log.close();
    }
    // The tail may cross segment ends where the disk path stops early: compare only where both agree in
    // length, and require the disk answer to be a prefix of the memory one.
    for (let i = 0; i < results[0]!.length; i++) {
      assert.ok(
        results[1]![i]!.startsWith(results[0]![i]!),
        `read ${i}: disk bytes are a prefix of tail bytes`,
      );
    }
  });

  it('rolls to a new segment when the active one would pass its capacity, and reads across all of them', async (t) => {
    const dir = tempDir(t);
    const { log } = open(dir, { segmentBytesMax: 100, tailCacheBytes: 0 });
    t.after(() => log.close());
    const payloads = Array.from({ length: 20 }, (_, i) => rec(i, 30)); // 38 bytes stored: 2 per segment
    log.writeGroup([batchOf(payloads.slice(0, 13)), batchOf(payloads.slice(13))]);
    log.publish();
    assert.equal(log.segmentCount, 10);
    const names = fs.readdirSync(dir).sort();
    assert.equal(names[1], '00000000000000000002.log');
    for (const name of names)
      assert.ok(fs.statSync(path.join(dir, name)).size <= 100, `${name} within capacity`);
    assert.deepEqual(await readAll(log, 0), payloads);
  });

  it('reading outside [logStartOffset, highWatermark] is OFFSET_OUT_OF_RANGE; at the high watermark, empty', async (t) => {
    const { log } = open(tempDir(t));
    t.after(() => log.close());
    append(log, [rec(0), rec(1)]);
    await assert.rejects(log.read(3, 10), OffsetOutOfRangeError);
    assert.deepEqual(await log.read(2, 10), { highWatermark: 2, chunks: [], bytes: 0 });
  });

  it('retention by bytes removes whole oldest segments, never the active one, and moves the log start', async (t) => {
    const dir = tempDir(t);
    const { log } = open(dir, { segmentBytesMax: 100, retentionBytes: 152 });
    t.after(() => log.close());
    for (let i = 0; i < 10; i++) append(log, [rec(i, 30)]);
    assert.deepEqual(log.enforceRetention(), [0, 2, 4]);
    assert.equal(log.logStartOffset, 6);
    assert.equal(log.sizeBytes, 152, 'as much as the limit allows, in whole segments');
    await assert.rejects(log.read(5, 100), OffsetOutOfRangeError);
    assert.deepEqual(payloadsOf((await log.read(6, 38)).chunks, 6), [rec(6, 30)]);
    assert.equal(fs.readdirSync(dir).length, log.segmentCount);
  });

  it('retention by age uses the time of each segment’s last write, injected', (t) => {
    let now = 1_000_000;
    const { log } = open(tempDir(t), { segmentBytesMax: 100, retentionMs: 5_000 }, () => now);
    t.after(() => log.close());
    append(log, [rec(0, 30), rec(1, 30)]);
    now += 10_000;
    append(log, [rec(2, 30), rec(3, 30)]);
    append(log, [rec(4, 30)]);
    assert.deepEqual(log.enforceRetention(now), [0]);
    now += 10_000;
    assert.deepEqual(log.enforceRetention(now), [2], 'the active segment stays however old');
    assert.equal(log.logStartOffset, 4);
  });

  it('a read already under way on a segment that retention removes still completes', async (t) => {
    const { log } = open(tempDir(t), { segmentBytesMax: 100, retentionBytes: 0, tailCacheBytes: 0 });
    t.after(() => log.close());
    for (let i = 0; i < 6; i++) append(log, [rec(i, 30)]);
    const reading = log.read(0, 100); // starts a disk read on segment 0
    assert.deepEqual(log.enforceRetention(), [0, 2]);
    assert.deepEqual(payloadsOf((await reading).chunks, 0), [rec(0, 30), rec(1, 30)]);
  });

  it('retention never removes records written but not yet published, so the log start never passes the high watermark', async (t) => {
    const { log } = open(tempDir(t), { segmentBytesMax: 100, retentionBytes: 0, tailCacheBytes: 0 });
    t.after(() => log.close());
    append(log, [rec(0, 30), rec(1, 30)]); // segment 0, published
    // A group that rolls into segments 2 and 4, written but not published (as while a FORCED group
    // waits for its fdatasync): retention may take segment 0, not the records of this group.
    log.writeGroup([batchOf([rec(2, 30), rec(3, 30), rec(4, 30)])]);
    assert.deepEqual(log.enforceRetention(), [0]);
    assert.ok(log.logStartOffset <= log.highWatermark.value, 'log start past the high watermark');
    log.publish();
    assert.deepEqual(await readAll(log, 2), [rec(2, 30), rec(3, 30), rec(4, 30)]);
  });

  it('an fdatasync under way on a segment that retention removes still succeeds', async (t) => {
    const dir = tempDir(t);
    const { log } = open(dir, { segmentBytesMax: 100, retentionBytes: 0, tailCacheBytes: 0 });
    t.after(() => log.close());
    for (let i = 0; i < 6; i++) append(log, [rec(i, 30)]); // segments 0, 2 and 4, none synced yet
    // Every thread of the pool blocked on a pipe, so the fdatasync calls wait in its queue while
    // retention removes their segments.
    const release = occupyThreadpool(t);
    const syncing = log.sync();
    assert.deepEqual(log.enforceRetention(), [0, 2]);
    release();
    await syncing;
  });

  it('reopening continues offsets and keeps every record', async (t) => {
    const dir = tempDir(t);
    const first = open(dir, { segmentBytesMax: 200 }).log;
    append(first, [rec(0, 50), rec(1, 50), rec(2, 50)]);
    append(first, [rec(3, 50)]);
    first.close();
    const { log, report } = open(dir, { segmentBytesMax: 200 });
    t.after(() => log.close());
    assert.equal(report.logEndOffset, 4);
    assert.equal(append(log, [rec(4)]), 4);
    assert.deepEqual(await readAll(log, 0), [rec(0, 50), rec(1, 50), rec(2, 50), rec(3, 50), rec(4)]);
  });

  it('reopening with a different segment capacity keeps the old segments and rolls by the new one', async (t) => {
    const dir = tempDir(t);
    const first = open(dir, { segmentBytesMax: 1000 }).log;
    append(
      first,
      Array.from({ length: 10 }, (_, i) => rec(i, 50)),
    );
    first.close();
    const { log } = open(dir, { segmentBytesMax: 100 });
    t.after(() => log.close());
    assert.equal(log.segmentCount, 1, 'an oversized old segment is kept as it is');
    append(log, [rec(10, 50), rec(11, 50), rec(12, 50)]);
    assert.equal(log.segmentCount, 4);
    assert.equal((await readAll(log, 0)).length, 13);
  });
});
