import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy } from '../../api.js';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body, i8, i32, i64, rawRequest, str } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import { decodeOffsetMismatch, encodeOffsetMismatchResponse } from '../error-details.js';
import { encodeProduceRequest, produceRecordPayloads } from './v1.js';
import { encodeProduceRequestV2 } from './v2.js';

describe('PRODUCE v2', () => {
  it('golden bytes: expectedOffset sits between ackPolicy and recordCount', () => {
    const frame = encodeProduceRequestV2(3, {
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      expectedOffset: 5,
      records: [Buffer.from('x')],
    });
    assert.equal(
      frame.toString('hex'),
      '00000021' +
        '0001' +
        '0002' +
        '00000003' +
        '000174' +
        '00000000' +
        '01' +
        '0000000000000005' +
        '00000001' +
        '00000001' +
        '78',
    );
  });

  it('round trip: v2 carries the expected offset; v1 decodes as "no expectation"', () => {
    const input = {
      topic: 't',
      partition: 2,
      ack: AckPolicy.FORCED,
      records: [Buffer.from('ab'), Buffer.from('c')],
    };
    const v2 = decodeRequest(body(encodeProduceRequestV2(1, { ...input, expectedOffset: 7 })));
    const v1 = decodeRequest(body(encodeProduceRequest(1, input)));
    assert.equal(v2.apiVersion, 2);
    if (v2.apiKey !== 1 || v1.apiKey !== 1) throw new Error('not a PRODUCE');
    assert.equal(v2.body.expectedOffset, 7);
    assert.equal(v1.body.expectedOffset, -1);
    assert.deepEqual(produceRecordPayloads(v2.body).map(String), ['ab', 'c']);
  });

  it('an expected offset below -1 is CORRUPT_REQUEST, silent under ack NONE', () => {
    for (const ack of [1, 0]) {
      assert.throws(
        () =>
          decodeRequest(
            rawRequest(
              1,
              2,
              77,
              Buffer.concat([str('t'), i32(0), i8(ack), i64(-2), i32(1), i32(1), Buffer.from('x')]),
            ),
          ),
        (e: unknown) =>
          e instanceof RequestRefusal &&
          e.code === ErrorCode.CORRUPT_REQUEST &&
          e.silent === (ack === 0) &&
          /expectedOffset: -2/.test(e.message),
      );
    }
  });

  it('golden bytes: OFFSET_MISMATCH carries the actual end', () => {
    const frame = encodeOffsetMismatchResponse(2, 10);
    assert.equal(frame.toString('hex'), '0000000e' + '00000002' + '0008' + '000000000000000a');
    const { errorCode, body: b } = readResponseFrame(body(frame));
    assert.equal(errorCode, ErrorCode.OFFSET_MISMATCH);
    assert.deepEqual(decodeOffsetMismatch(b), { logEndOffset: 10 });
  });
});
