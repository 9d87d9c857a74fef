import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AckPolicy } from '../../api.js';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest } from '../decode-request.js';
import {
  decodeProduceResponse,
  encodeProduceRequest,
  encodeProduceResponse,
  produceRecordPayloads,
} from './v1.js';

describe('PRODUCE v1', () => {
  it('golden bytes: a request encodes to exactly the spec layout', () => {
    const frame = encodeProduceRequest(7, {
      topic: 'ab',
      partition: 1,
      ack: AckPolicy.FORCED,
      records: [Buffer.from([0xff]), Buffer.from('hi')],
    });
    assert.equal(
      frame.toString('hex'),
      [
        '00000020', // frameLength 32
        '0001', // apiKey PRODUCE
        '0001', // version 1
        '00000007', // correlationId
        '00026162', // topic "ab"
        '00000001', // partition
        '02', // ack FORCED
        '00000002', // recordCount
        '00000001ff', // size 1, 0xff
        '000000026869', // size 2, "hi"
      ].join(''),
    );
  });

  it('round trip: what a client encodes, the broker decodes field for field', () => {
    const records = [Buffer.alloc(0x100).map((_, i) => i), Buffer.from([0]), Buffer.from('ünïcode')];
    const frame = encodeProduceRequest(-5, {
      topic: 'orders.eu',
      partition: 3,
      ack: AckPolicy.NONE,
      records,
    });
    const req = decodeRequest(body(frame));
    assert.equal(req.apiKey, 1);
    assert.equal(req.correlationId, -5);
    if (req.apiKey !== 1) return;
    assert.equal(req.body.topic, 'orders.eu');
    assert.equal(req.body.partition, 3);
    assert.equal(req.body.ack, AckPolicy.NONE);
    assert.equal(req.body.recordCount, 3);
    assert.deepEqual(produceRecordPayloads(req.body), records);
  });

  it('golden bytes and round trip: the success response carries both offsets as int64', () => {
    const frame = encodeProduceResponse(9, { baseOffset: 2 ** 40 + 5, logEndOffset: 2 ** 40 + 7 });
    assert.equal(
      frame.toString('hex'),
      '00000016' + '00000009' + '0000' + '0000010000000005' + '0000010000000007',
    );
    const resp = readResponseFrame(body(frame));
    assert.equal(resp.correlationId, 9);
    assert.equal(resp.errorCode, 0);
    assert.deepEqual(decodeProduceResponse(resp.body), {
      baseOffset: 2 ** 40 + 5,
      logEndOffset: 2 ** 40 + 7,
    });
  });

  it('a response offset beyond 2^53 is refused rather than rounded', () => {
    const bad = Buffer.from('0020000000000001' + '0000000000000000', 'hex');
    assert.throws(() => decodeProduceResponse(bad), /baseOffset/);
  });
});
