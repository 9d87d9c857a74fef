import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { encodeStoredRecords, nativeAddon } from '@booblik/protocol';
import fc from 'fast-check';
import { scanSegmentFile, scanSegmentFileTs } from './recovery.js';

describe('native recovery scan', { skip: nativeAddon === null && 'native module not built' }, () => {
  it('finds the same valid end, record count, stop reason and index as the TypeScript scan (property)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-scan-'));
    try {
      fc.assert(
        fc.property(
          fc.array(fc.uint8Array({ minLength: 1, maxLength: 400 }), { minLength: 0, maxLength: 40 }),
          fc.nat(),
          fc.nat(),
          fc.boolean(),
          fc.integer({ min: 1, max: 2000 }),
          (payloads, cut, flipAt, flip, interval) => {
            let bytes = encodeStoredRecords(payloads);
            bytes = Buffer.from(bytes.subarray(0, cut % (bytes.length + 1)));
            if (flip && bytes.length > 0) bytes[flipAt % bytes.length]! ^= 0x20;
            const file = path.join(dir, 'segment.log');
            fs.writeFileSync(file, bytes);
            const fd = fs.openSync(file, 'r');
            try {
              const native = scanSegmentFile(fd, bytes.length, 1000, interval);
              const ts = scanSegmentFileTs(fd, bytes.length, 1000, interval);
              assert.deepEqual(
                [native.validBytes, native.records, native.stop],
                [ts.validBytes, ts.records, ts.stop],
              );
              assert.equal(native.index.entries, ts.index.entries);
              for (let offset = 1000; offset < 1000 + ts.records; offset++) {
                assert.deepEqual(native.index.floor(offset), ts.index.floor(offset), `floor(${offset})`);
              }
            } finally {
              fs.closeSync(fd);
            }
          },
        ),
        { numRuns: 300 },
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
