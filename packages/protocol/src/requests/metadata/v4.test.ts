import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { ReplicaFlag } from '../../topics/route-v2.js';
import { decodeRequest } from '../decode-request.js';
import { decodeMetadataResponseV4, encodeMetadataRequestV4, encodeMetadataResponseV4 } from './v4.js';

const answer = {
  revision: 3,
  topics: [
    {
      name: 'a',
      partitions: [
        {
          partition: 0,
          logStartOffset: 1,
          highWatermark: 2,
          route: {
            epoch: 2,
            primary: 'h:1',
            replicas: [
              {
                member: 'b1',
                address: 'h:1',
                zone: 'z1',
                flags: ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE,
                lagRecords: 0,
                lagMillis: 0,
              },
              {
                member: 'b2',
                address: 'r:2',
                zone: 'z2',
                flags: ReplicaFlag.LIVE,
                lagRecords: 5,
                lagMillis: 1200,
              },
            ],
          },
        },
      ],
    },
  ],
};

const answerHex =
  '00000076' +
  '00000004' +
  '0000' +
  '0000000000000003' +
  '00000001' +
  '000161' +
  '00000001' +
  '00000000' +
  '0000000000000001' +
  '0000000000000002' +
  '00000002' +
  '0003683a31' +
  '00000002' +
  '00026231' +
  '0003683a31' +
  '00027a31' +
  '03' +
  '0000000000000000' +
  '0000000000000000' +
  '00026232' +
  '0003723a32' +
  '00027a32' +
  '02' +
  '0000000000000005' +
  '00000000000004b0';

describe('METADATA v4', () => {
  it('golden bytes: the request is v3 with version 4', () => {
    const frame = encodeMetadataRequestV4(5, { topics: ['x'], minRevision: 9, flags: 0 });
    assert.equal(
      frame.toString('hex'),
      '00000018' + '0003' + '0004' + '00000005' + '00000001' + '000178' + '0000000000000009' + '00',
    );
    const decoded = decodeRequest(body(frame));
    assert.equal(decoded.apiVersion, 4);
    assert.deepEqual(decoded.body, { topics: ['x'], minRevision: 9, flags: 0 });
  });

  it('golden bytes: each route names the epoch, every replica with its zone, whether in sync, and its lag', () => {
    const frame = encodeMetadataResponseV4(4, answer);
    assert.equal(frame.toString('hex'), answerHex);
    assert.deepEqual(decodeMetadataResponseV4(readResponseFrame(body(frame)).body), answer);
  });

  it('an answer with a lag below -1 or a negative epoch is refused naming the field', () => {
    const frame = encodeMetadataResponseV4(4, answer);
    const lag = Buffer.from(frame);
    lag.writeBigInt64BE(-2n, lag.length - 8);
    assert.throws(
      () => decodeMetadataResponseV4(readResponseFrame(body(lag)).body),
      /topics\[0\]\.partitions\[0\]\.route\.replicas\[1\]\.lagMillis/,
    );
    const epoch = Buffer.from(frame);
    epoch.writeInt32BE(-1, 4 + 4 + 2 + 8 + 4 + 3 + 4 + 20);
    assert.throws(() => decodeMetadataResponseV4(readResponseFrame(body(epoch)).body), /route\.epoch/);
  });
});
