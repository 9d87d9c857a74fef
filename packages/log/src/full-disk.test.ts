import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { Partition } from './partition.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

const child = new URL('./test-support/full-disk-child.js', import.meta.url).pathname;
const LIMIT_BYTES = 100_000;

describe('full disk (simulated with a file-size limit)', () => {
  for (const mode of ['append', 'replica'] as const) {
    it(`a refused write is a StorageError, is cut off entirely, and writes work again once there is room (${mode})`, async (t) => {
      const dir = tempDir(t);
      let out: string;
      try {
        out = execFileSync('prlimit', [`--fsize=${LIMIT_BYTES}`, process.execPath, child, dir, mode], {
          encoding: 'utf8',
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return t.skip('prlimit is not installed');
        throw error;
      }
      const result = JSON.parse(out) as { acked: number; refused: string; hw: number; readBytes: number };
      assert.equal(result.refused, 'storage-error EFBIG');
      assert.equal(result.hw, result.acked, 'the refused batch never became readable');
      assert.ok(result.readBytes > 0, 'reads kept working after the refusal');

      // "Space freed": the same directory without the limit.
      const { partition, report } = Partition.open(dir, 'full', 0, {
        ...defaultLogConfig,
        segmentBytesMax: 1 << 20,
      });
      t.after(() => partition.close());
      assert.deepEqual(report.cuts, [], 'nothing half-written was left for recovery to cut');
      assert.equal(partition.highWatermark.value, result.acked);
      const next = await partition.append(batchOf([rec('after')]), AckPolicy.FORCED);
      assert.equal(next.baseOffset, result.acked);
      const records = await readAll(
        { read: (o, m) => partition.read(o, m), highWatermark: partition.highWatermark },
        0,
      );
      assert.equal(records.length, result.acked + 1);
    });
  }
});
