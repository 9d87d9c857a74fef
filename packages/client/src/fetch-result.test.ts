import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeFetchPayload, encodeStoredRecords, indexFetchPayload } from '@booblik/protocol';
import { DecodedFetch } from './fetch-result.js';

const payloads = Array.from({ length: 40 }, (_, i) => Buffer.alloc(1 + ((i * 37) % 300), i));

describe('a decoded fetch', () => {
  it('hands out the same payloads in order, out of order, and as records, whatever was asked first', () => {
    const payload = encodeStoredRecords(payloads);
    const expected = decodeFetchPayload(payload, { fetchOffset: 7, maxBytes: payload.length }).records;
    const index = indexFetchPayload(payload, { fetchOffset: 7, maxBytes: payload.length });
    const fetched = new DecodedFetch(100, 7, payload, index);
    // In order for a while (the walking cursor), then a jump back and forward (the index), then on.
    const seen: Buffer[] = [];
    for (let i = 0; i < 10; i++) seen.push(fetched.payloadAt(i));
    assert.deepEqual(fetched.payloadAt(3), expected[3]);
    assert.deepEqual(fetched.payloadAt(25), expected[25]);
    for (let i = 10; i < payloads.length; i++) seen.push(fetched.payloadAt(i));
    assert.deepEqual(seen, expected);
    assert.deepEqual(
      fetched.records.map((r) => [r.offset, r.payload]),
      expected.map((p, i) => [7 + i, p]),
    );
  });
});
