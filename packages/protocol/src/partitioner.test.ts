import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fnv1a32, partitionForKey } from './partitioner.js';
import { readVectors } from './test-support/vectors.js';

const vectors = readVectors('partitioner-fnv1a.tsv');
const counts = [1, 2, 3, 4, 7, 16, 64, 1000];

describe('partitioner', () => {
  it('vectors: FNV-1a hash and partition for every count agree with the golden file', () => {
    assert.ok(vectors.length >= 10);
    for (const v of vectors) {
      const key = Buffer.from(v.keyHex!, 'hex');
      assert.equal(fnv1a32(key), Number(v.hash), `hash of ${v.name}`);
      for (const n of counts) assert.equal(partitionForKey(key, n), Number(v[`p${n}`]), `${v.name} p${n}`);
    }
  });

  it('reads bytes unsigned: 0x80 does not hash like -128', () => {
    assert.equal(fnv1a32(Buffer.from([0x80])), 2232128415);
  });

  it('refuses zero or negative partition counts instead of returning NaN', () => {
    assert.throws(() => partitionForKey(Buffer.from('k'), 0), /partitionCount: 0/);
    assert.throws(() => partitionForKey(Buffer.from('k'), -3), RangeError);
  });
});
