import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest } from '../decode-request.js';
import { decodeMetadataResponse, encodeMetadataRequest, encodeMetadataResponse } from './v1.js';

describe('METADATA v1', () => {
  it('golden bytes: a request for one topic', () => {
    assert.equal(
      encodeMetadataRequest(5, { topics: ['x'] }).toString('hex'),
      '0000000f' + '0003' + '0001' + '00000005' + '00000001' + '000178',
    );
  });

  it('round trip request: topics arrive as sent, an empty list meaning every topic', () => {
    for (const topics of [[], ['a', 'b.c', 'заказы', 'a']]) {
      const decoded = decodeRequest(body(encodeMetadataRequest(1, { topics })));
      assert.deepEqual(decoded.body, { topics });
    }
  });

  it('golden bytes and round trip response: topics, partitions and both offsets', () => {
    const topics = [
      { name: 'a', partitions: [{ partition: 0, logStartOffset: 1, highWatermark: 2 }] },
      { name: 'b', partitions: [] },
    ];
    const frame = encodeMetadataResponse(4, topics);
    assert.equal(
      frame.toString('hex'),
      '0000002c' +
        '00000004' +
        '0000' +
        '00000002' +
        '000161' +
        '00000001' +
        '00000000' +
        '0000000000000001' +
        '0000000000000002' +
        '000162' +
        '00000000',
    );
    assert.deepEqual(decodeMetadataResponse(readResponseFrame(body(frame)).body), topics);
  });

  it('a response claiming more partitions than it holds is a protocol error, not a huge allocation', () => {
    const bad = Buffer.from('00000001' + '000161' + '7fffffff', 'hex');
    assert.throws(() => decodeMetadataResponse(bad), /partitionCount: 2147483647/);
  });
});
