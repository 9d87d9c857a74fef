import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../frame/header.js';
import { body } from '../test-support/frames.js';
import { decodeRequest } from './decode-request.js';
import { decodeNotPrimary, encodeNotPrimaryResponse } from './error-details.js';
import { encodeFetchRequestV2 } from './fetch/v2.js';
import { encodeFetchRequestV3 } from './fetch/v3.js';
import { encodeProduceRequestV2 } from './produce/v2.js';
import { encodeProduceRequestV3 } from './produce/v3.js';

describe('PRODUCE v3 and FETCH v3 (clients that follow routes)', () => {
  it('golden bytes: v2 bytes with version 3, decoded as v2', () => {
    const input = { topic: 'a', partition: 1, ack: 1 as const, records: [Buffer.from('z')] };
    const v3 = encodeProduceRequestV3(7, input);
    const v2 = encodeProduceRequestV2(7, input);
    assert.equal(v3.readInt16BE(6), 3);
    assert.equal(v3.subarray(8).toString('hex'), v2.subarray(8).toString('hex'));
    assert.deepEqual(decodeRequest(body(v3)).body, decodeRequest(body(v2)).body);
    assert.equal(decodeRequest(body(v3)).apiVersion, 3);

    const fetch = { topic: 'a', partition: 0, fetchOffset: 5, maxBytes: 100, maxWaitMs: 10, minBytes: 1 };
    const f3 = encodeFetchRequestV3(8, fetch);
    assert.equal(f3.readInt16BE(6), 3);
    assert.equal(f3.subarray(8).toString('hex'), encodeFetchRequestV2(8, fetch).subarray(8).toString('hex'));
    assert.deepEqual(decodeRequest(body(f3)).body, decodeRequest(body(encodeFetchRequestV2(8, fetch))).body);
  });

  it('golden bytes: NOT_PRIMARY carries the current route', () => {
    const frame = encodeNotPrimaryResponse(4, { primary: 'h:1', replicas: [] });
    assert.equal(frame.toString('hex'), '0000000f' + '00000004' + '0009' + '0003683a31' + '00000000');
    const { body: errorBody } = readResponseFrame(frame.subarray(4));
    assert.deepEqual(decodeNotPrimary(errorBody), { primary: 'h:1', replicas: [] });
  });
});
