import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../../frame/header.js';
import { encodeStoredRecords } from '../../records/stored-records.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest } from '../decode-request.js';
import { decodeFetchResponse, encodeFetchRequestV1, encodeFetchResponseHeader } from './v1.js';
import { encodeFetchRequestV2 } from './v2.js';

const req = {
  topic: 't',
  partition: 2,
  fetchOffset: 2 ** 33 + 1,
  maxBytes: 1024,
  maxWaitMs: 500,
  minBytes: 10,
};

describe('FETCH v1 and v2', () => {
  it('golden bytes: a v2 request carries the wait and minimum after v1 fields', () => {
    assert.equal(
      encodeFetchRequestV2(1, req).toString('hex'),
      '00000023' +
        '0002' +
        '0002' +
        '00000001' +
        '000174' +
        '00000002' +
        '0000000200000001' +
        '00000400' +
        '000001f4' +
        '0000000a',
    );
  });

  it('round trip v2: every field the client sends reaches the broker', () => {
    const decoded = decodeRequest(body(encodeFetchRequestV2(42, req)));
    assert.equal(decoded.apiVersion, 2);
    assert.deepEqual(decoded.body, req);
  });

  it('round trip v1: no wait fields, so the broker answers at once', () => {
    const decoded = decodeRequest(body(encodeFetchRequestV1(42, req)));
    assert.equal(decoded.apiVersion, 1);
    assert.deepEqual(decoded.body, { ...req, maxWaitMs: 0, minBytes: 0 });
  });

  it('round trip response: header written by the broker, payload appended as file bytes', () => {
    const payload = encodeStoredRecords([Buffer.from('a'), Buffer.from('bc')]);
    const frame = Buffer.concat([encodeFetchResponseHeader(3, 77, payload.length), payload]);
    assert.equal(frame.readInt32BE(0), frame.length - 4, 'frameLength counts everything after it');
    const resp = readResponseFrame(body(frame));
    assert.equal(resp.correlationId, 3);
    const decoded = decodeFetchResponse(resp.body);
    assert.equal(decoded.highWatermark, 77);
    assert.deepEqual(decoded.payload, payload);
  });

  it('payloadBytes that disagree with the frame are a protocol error, in both directions', () => {
    const payload = encodeStoredRecords([Buffer.from('abc')]);
    const header = encodeFetchResponseHeader(3, 1, payload.length);
    const longer = readResponseFrame(body(Buffer.concat([header, payload, Buffer.from([0])])));
    assert.throws(() => decodeFetchResponse(longer.body), /payloadBytes: 11, but 12 bytes remain/);
    const shorter = readResponseFrame(body(Buffer.concat([header, payload.subarray(1)])));
    assert.throws(() => decodeFetchResponse(shorter.body), /payloadBytes: 11, but 10 bytes remain/);
  });
});
