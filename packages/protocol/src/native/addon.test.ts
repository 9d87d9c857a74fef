import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { crc32cTable } from '../crc32c/table.js';
import { encodeStoredRecords, writeStoredRecordsTs } from '../records/stored-records.js';
import { readVectors } from '../test-support/vectors.js';
import { nativeAddon, scanStops } from './addon.js';

/** The scan rules of the spec, written out plainly: the reference the native scan must match. */
function referenceScan(buf: Buffer): [number, number, string] {
  let pos = 0;
  let records = 0;
  while (pos < buf.length) {
    if (buf.length - pos < 8) return [pos, records, 'short-header'];
    const size = buf.readInt32BE(pos);
    if (size <= 0) return [pos, records, 'bad-size'];
    if (size > buf.length - pos - 8) return [pos, records, 'past-end'];
    if (crc32cTable(buf, pos + 8, pos + 8 + size) !== buf.readUInt32BE(pos + 4))
      return [pos, records, 'crc-mismatch'];
    records++;
    pos += 8 + size;
  }
  return [pos, records, 'end'];
}

function wireOf(payloads: Uint8Array[]): Buffer {
  return Buffer.concat(
    payloads.flatMap((p) => {
      const size = Buffer.alloc(4);
      size.writeInt32BE(p.length, 0);
      return [size, Buffer.from(p)];
    }),
  );
}

const payloadsArb = fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), {
  minLength: 1,
  maxLength: 20,
});

describe('native module (compared with the TypeScript reference)', {
  skip: nativeAddon === null && 'native module not built',
}, () => {
  const addon = nativeAddon!;

  it('crc32c: every golden vector, whole and as a sub-range', () => {
    for (const v of readVectors('crc32c.tsv')) {
      const bytes = Buffer.from(v.payloadHex!, 'hex');
      assert.equal(addon.crc32c(bytes, 0, bytes.length), Number(v.crc32c), v.name);
      const framed = Buffer.concat([Buffer.from([1, 2, 3]), bytes, Buffer.from([4])]);
      assert.equal(
        addon.crc32c(framed, 3, 3 + bytes.length),
        Number(v.crc32c),
        `${v.name} in a larger buffer`,
      );
    }
  });

  it('storeRecords writes the same bytes and positions as the TypeScript conversion (property)', () => {
    fc.assert(
      fc.property(payloadsArb, fc.nat(16), (payloads, at) => {
        const wire = wireOf(payloads);
        const bytes = wire.length + payloads.length * 4;
        const a = Buffer.alloc(at + bytes);
        const b = Buffer.alloc(at + bytes);
        const pa = new Uint32Array(payloads.length);
        const pb = new Uint32Array(payloads.length);
        assert.equal(addon.storeRecords(wire, payloads.length, a, at, pa), bytes);
        assert.equal(writeStoredRecordsTs(wire, payloads.length, b, at, pb), bytes);
        assert.deepEqual(a, b);
        assert.deepEqual(pa, pb);
      }),
      { numRuns: 300 },
    );
  });

  it('scanRecords stops where the reference stops, for the same reason, on cut and damaged input (property)', () => {
    fc.assert(
      fc.property(
        payloadsArb,
        fc.nat(),
        fc.nat(),
        fc.nat(7),
        fc.boolean(),
        (payloads, cut, flipAt, bit, flip) => {
          let buf = encodeStoredRecords(payloads);
          buf = Buffer.from(buf.subarray(0, cut % (buf.length + 1)));
          if (flip && buf.length > 0) buf[flipAt % buf.length]! ^= 1 << bit;
          const [valid, records, stop] = addon.scanRecords(buf, 0, buf.length);
          assert.deepEqual([valid, records, scanStops[stop]], referenceScan(buf));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('bad arguments are a RangeError, never a crash: ranges outside the buffer, wrong types, lying sizes', () => {
    const buf = Buffer.alloc(16);
    assert.throws(() => addon.crc32c(buf, 0, 17), RangeError);
    assert.throws(() => addon.crc32c(buf, 5, 4), RangeError);
    assert.throws(() => addon.scanRecords(buf, -1, 4), RangeError);
    assert.throws(() => addon.crc32c('abc' as unknown as Buffer, 0, 1), RangeError);
    const lying = Buffer.from('000000ff41', 'hex'); // claims 255 bytes, holds 1
    assert.throws(() => addon.storeRecords(lying, 1, Buffer.alloc(300), 0), RangeError);
    assert.throws(
      () => addon.storeRecords(wireOf([Buffer.from('abc')]), 1, Buffer.alloc(10), 0),
      /target too small/,
    );
  });
});
