import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest } from '../decode-request.js';
import { encodeMetadataRequest } from './v1.js';
import { decodeMetadataResponseV2, encodeMetadataRequestV2, encodeMetadataResponseV2 } from './v2.js';

describe('METADATA v2', () => {
  it('golden bytes: the request is v1 with version 2', () => {
    const v2 = encodeMetadataRequestV2(5, { topics: ['x'] });
    assert.equal(v2.toString('hex'), '0000000f' + '0003' + '0002' + '00000005' + '00000001' + '000178');
    const v1 = encodeMetadataRequest(5, { topics: ['x'] });
    assert.deepEqual(decodeRequest(body(v2)).body, decodeRequest(body(v1)).body);
  });

  it('golden bytes and round trip response: revision first, a route after each partition', () => {
    const res = {
      revision: 3,
      topics: [
        {
          name: 'a',
          partitions: [
            {
              partition: 0,
              logStartOffset: 1,
              highWatermark: 2,
              route: { primary: 'h:1', replicas: ['r:2'] },
            },
          ],
        },
      ],
    };
    const frame = encodeMetadataResponseV2(4, res);
    assert.equal(
      frame.toString('hex'),
      '0000003b' +
        '00000004' +
        '0000' +
        '0000000000000003' +
        '00000001' +
        '000161' +
        '00000001' +
        '00000000' +
        '0000000000000001' +
        '0000000000000002' +
        '0003683a31' +
        '00000001' +
        '0003723a32',
    );
    assert.deepEqual(decodeMetadataResponseV2(readResponseFrame(body(frame)).body), res);
  });

  it('a route claiming more replicas than the frame holds is a protocol error', () => {
    const bad = Buffer.from(
      '0000000000000001' +
        '00000001' +
        '000161' +
        '00000001' +
        '00000000' +
        '00'.repeat(16) +
        '0000' +
        '7fffffff',
      'hex',
    );
    assert.throws(() => decodeMetadataResponseV2(bad), /replicaCount: 2147483647/);
  });
});
