import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readVectors } from '../test-support/vectors.js';
import { crc32c, crc32cNative, crc32cTable } from './index.js';

const vectors = readVectors('crc32c.tsv');

describe('crc32c', () => {
  it('vectors: the TypeScript table gives every golden value', () => {
    assert.ok(vectors.length >= 10);
    for (const v of vectors) {
      assert.equal(crc32cTable(Buffer.from(v.payloadHex!, 'hex')), Number(v.crc32c), v.name);
    }
  });

  it('vectors: the native module (when installed) gives every golden value', (t) => {
    if (crc32cNative === null) return t.skip('native module not installed');
    for (const v of vectors) {
      assert.equal(crc32cNative(Buffer.from(v.payloadHex!, 'hex')), Number(v.crc32c), v.name);
    }
  });

  it('is Castagnoli, not zlib CRC-32 (which gives 0xCBF43926 for 123456789)', () => {
    const check = Buffer.from('123456789');
    assert.equal(crc32c(check), 0xe3069283);
    assert.notEqual(crc32c(check), 0xcbf43926);
  });

  it('returns unsigned values above 0x7FFFFFFF, never negative', () => {
    const high = vectors.find((v) => Number(v.crc32c) > 0x7fffffff)!;
    assert.ok(high, 'the vectors include a CRC above 0x7FFFFFFF');
    assert.equal(crc32c(Buffer.from(high.payloadHex!, 'hex')), Number(high.crc32c));
  });

  it('a sub-range gives the CRC of those bytes alone, on either side of the native threshold', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.nat(16), fc.nat(16), (bytes, pre, post) => {
        const framed = Buffer.concat([Buffer.alloc(pre, 0xaa), bytes, Buffer.alloc(post, 0x55)]);
        const expected = crc32cTable(Buffer.from(bytes));
        assert.equal(crc32c(framed, pre, pre + bytes.length), expected);
        if (crc32cNative) assert.equal(crc32cNative(Buffer.from(bytes)), expected);
      }),
      { numRuns: 300 },
    );
  });
});
