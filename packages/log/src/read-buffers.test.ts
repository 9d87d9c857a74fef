import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { PartitionLog } from './partition-log.js';
import { ReadBufferPool } from './read-buffers.js';
import { batchOf, payloadsOf, rec } from './test-support/records.js';

describe('read buffers', () => {
  it('a buffer is lent again only after it is released, and a second release changes nothing', () => {
    const pool = new ReadBufferPool(1 << 20);
    const a = pool.take(100_000);
    const b = pool.take(100_000);
    assert.notEqual(a.buffer, b.buffer, 'two loans never share a buffer');
    a.release!();
    a.release!();
    assert.equal(pool.idleBytes, 131_072);
    const c = pool.take(90_000);
    const d = pool.take(90_000);
    assert.equal(c.buffer, a.buffer, 'the released buffer is reused');
    assert.notEqual(d.buffer, a.buffer, 'but only once, even though it was released twice');
  });

  it('small reads are not pooled, and the pool never keeps more than its limit idle', () => {
    const pool = new ReadBufferPool(200_000);
    assert.equal(pool.take(1000).release, undefined);
    const loans = [pool.take(100_000), pool.take(100_000)];
    for (const l of loans) l.release!();
    assert.equal(pool.idleBytes, 131_072, 'the second would pass the limit: dropped');
  });

  it('disk reads held at once each keep their own bytes, whatever the pool does meanwhile', async (t) => {
    const pool = new ReadBufferPool();
    const { log } = PartitionLog.open(
      tempDir(t),
      't-0',
      { ...defaultLogConfig, tailCacheBytes: 0 },
      { readBuffers: pool },
    );
    t.after(() => log.close());
    const payloads = Array.from({ length: 40 }, (_, i) => rec(i, 5000));
    log.writeGroup([batchOf(payloads)]);
    log.publish();
    const reads = await Promise.all(Array.from({ length: 20 }, (_, i) => log.read(i * 2, 70_000)));
    for (const [i, r] of reads.entries()) {
      if (r.bytes >= 65_536) assert.ok(r.release, 'a read of 64 KiB or more borrows from the pool');
      assert.deepEqual(payloadsOf(r.chunks, i * 2)[0], payloads[i * 2], `read ${i} holds its own records`);
    }
    for (const r of reads) r.release?.();
    const again = await log.read(0, 70_000);
    assert.deepEqual(payloadsOf(again.chunks, 0).slice(0, 2), payloads.slice(0, 2));
  });
});
