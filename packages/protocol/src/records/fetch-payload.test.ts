import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptRecordError } from '../errors.js';
import { decodeFetchPayload, indexFetchPayload } from './fetch-payload.js';
import { encodeStoredRecords } from './stored-records.js';

const three = [Buffer.from('first'), Buffer.from('second!'), Buffer.from('third record')];
const payload = encodeStoredRecords(three);
const boundaries = [0, 13, 28, 48]; // 8 + 5, 8 + 7, 8 + 12

describe('FETCH payload decoding', () => {
  it('a payload cut at every byte yields exactly the whole records before the cut', () => {
    assert.equal(payload.length, boundaries[3]);
    for (let cut = 0; cut <= payload.length; cut++) {
      const decoded = decodeFetchPayload(payload.subarray(0, cut), { fetchOffset: 10, maxBytes: 1 << 20 });
      const whole = boundaries.filter((b) => b > 0 && b <= cut).length;
      assert.deepEqual(decoded.records, three.slice(0, whole), `cut at ${cut}`);
      assert.equal(decoded.nextOffset, 10 + whole, `cut at ${cut}`);
      assert.equal(decoded.truncatedBytes, cut - boundaries[whole]!, `cut at ${cut}`);
      // The tail's size is known once its 4-byte size field arrived.
      const tail = cut - boundaries[whole]!;
      assert.equal(decoded.truncatedRecordBytes, tail >= 4 ? three[whole]!.length : -1, `cut at ${cut}`);
      assert.equal(decoded.recordExceedsMaxBytes, false, 'maxBytes was large: the broker stopped early');
    }
  });

  it('the index gives each whole record header position and the end of the last, at every cut', () => {
    for (let cut = 0; cut <= payload.length; cut++) {
      const index = indexFetchPayload(payload.subarray(0, cut), { fetchOffset: 10, maxBytes: 1 << 20 });
      const whole = boundaries.filter((b) => b > 0 && b <= cut).length;
      assert.equal(index.count, whole, `cut at ${cut}`);
      assert.deepEqual(index.bounds, boundaries.slice(0, whole + 1), `cut at ${cut}`);
    }
  });

  it('truncation is not taken for corruption: a cut inside the header or payload is dropped quietly', () => {
    for (const cut of [14, 17, 20, 21, 47]) {
      assert.doesNotThrow(() =>
        decodeFetchPayload(payload.subarray(0, cut), { fetchOffset: 0, maxBytes: cut }),
      );
    }
  });

  it('a flipped payload bit is a corrupt record, never returned', () => {
    const bad = Buffer.from(payload);
    bad[13 + 8 + 2]! ^= 0x04; // inside "second!"
    assert.throws(
      () => decodeFetchPayload(bad, { fetchOffset: 5, maxBytes: 1 << 20 }),
      (e: unknown) => e instanceof CorruptRecordError && e.offset === 6 && /crc32c/.test(e.message),
    );
  });

  it('a flipped CRC bit is a corrupt record', () => {
    const bad = Buffer.from(payload);
    bad[4]! ^= 0x80;
    assert.throws(() => decodeFetchPayload(bad, { fetchOffset: 0, maxBytes: 1 << 20 }), CorruptRecordError);
  });

  it('size 0 and negative sizes are corrupt, not an endless empty record', () => {
    for (const size of [0, -1, -2147483648]) {
      const bad = Buffer.from(payload);
      bad.writeInt32BE(size, 13);
      assert.throws(
        () => decodeFetchPayload(bad, { fetchOffset: 0, maxBytes: 1 << 20 }),
        (e: unknown) => e instanceof CorruptRecordError && e.offset === 1 && /size/.test(e.message),
      );
    }
  });

  it('a size running past the payload is a truncated tail carrying that size', () => {
    const bad = Buffer.from(payload);
    bad.writeInt32BE(1000, 28);
    const decoded = decodeFetchPayload(bad, { fetchOffset: 0, maxBytes: 48 });
    assert.equal(decoded.records.length, 2);
    assert.equal(decoded.truncatedRecordBytes, 1000);
  });

  it('a CRC above 0x7FFFFFFF is read unsigned and matches', () => {
    // CRC-32C of 32 zero bytes is 0x8A9136AA.
    const stored = encodeStoredRecords([Buffer.alloc(32)]);
    assert.equal(stored.readUInt32BE(4), 0x8a9136aa);
    assert.equal(decodeFetchPayload(stored, { fetchOffset: 0, maxBytes: 100 }).records.length, 1);
  });

  it('no whole record and a header saying it cannot fit: recordExceedsMaxBytes with its size', () => {
    const big = encodeStoredRecords([Buffer.alloc(500, 1)]);
    const decoded = decodeFetchPayload(big.subarray(0, 100), { fetchOffset: 0, maxBytes: 100 });
    assert.equal(decoded.records.length, 0);
    assert.equal(decoded.recordExceedsMaxBytes, true);
    assert.equal(decoded.truncatedRecordBytes, 500);
  });

  it('maxBytes smaller than a record header: exceeded, size unknown', () => {
    const decoded = decodeFetchPayload(payload.subarray(0, 3), { fetchOffset: 0, maxBytes: 3 });
    assert.equal(decoded.recordExceedsMaxBytes, true);
    assert.equal(decoded.truncatedRecordBytes, -1);
  });

  it('records after the first whole one do not count as exceeding: the next fetch starts there', () => {
    const decoded = decodeFetchPayload(payload.subarray(0, 20), { fetchOffset: 0, maxBytes: 20 });
    assert.equal(decoded.records.length, 1);
    assert.equal(decoded.recordExceedsMaxBytes, false);
  });
});
