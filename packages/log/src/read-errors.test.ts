import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { LogClosedError, StorageError } from './errors.js';
import { PartitionLog } from './partition-log.js';
import { batchOf, rec } from './test-support/records.js';

/** A partition with two published records, read from the segment file (no tail cache). */
function logWithRecords(t: import('node:test').TestContext) {
  const { log } = PartitionLog.open(tempDir(t), 't-0', { ...defaultLogConfig, tailCacheBytes: 0 });
  log.writeGroup([batchOf([rec('a'), rec('b')])]);
  log.publish();
  return log;
}

describe('read errors are typed', () => {
  it('a read of a closed partition is LogClosedError, not a plain Error', async (t) => {
    const log = logWithRecords(t);
    log.close();
    await assert.rejects(
      log.read(0, 1 << 20),
      (e: unknown) => e instanceof LogClosedError && /t-0/.test(e.message),
    );
  });

  it('a read the disk fails (EIO) is StorageError with the code, and the next read works', async (t) => {
    const log = logWithRecords(t);
    t.after(() => log.close());
    const eio = t.mock.method(fs, 'read', (...args: unknown[]) => {
      const callback = args.at(-1) as (error: NodeJS.ErrnoException) => void;
      process.nextTick(() =>
        callback(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO', errno: -5 })),
      );
    });
    await assert.rejects(log.read(0, 1 << 20), (e: unknown) => e instanceof StorageError && e.code === 'EIO');
    eio.mock.restore();
    assert.equal((await log.read(0, 1 << 20)).bytes > 0, true);
  });
});
