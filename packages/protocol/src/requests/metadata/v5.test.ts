import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { ReplicaFlag } from '../../topics/route-v2.js';
import { decodeRequest } from '../decode-request.js';
import {
  decodeMetadataResponseV5,
  encodeMetadataRequestV5,
  encodeMetadataResponseV5,
  MetadataOffsets,
} from './v5.js';

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
          offsets: MetadataOffsets.COPY,
          route: {
            epoch: 2,
            primary: '',
            replicas: [
              {
                member: 'b1',
                address: 'h:1',
                zone: 'z1',
                flags: ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE,
                lagRecords: -1,
                lagMillis: -1,
              },
            ],
          },
        },
      ],
    },
  ],
};

const answerHex =
  '00000056' +
  '00000004' +
  '0000' +
  '0000000000000003' +
  '00000001' +
  '000161' +
  '00000001' +
  '00000000' +
  '0000000000000001' +
  '0000000000000002' +
  '01' +
  '00000002' +
  '0000' +
  '00000001' +
  '00026231' +
  '0003683a31' +
  '00027a31' +
  '03' +
  'ffffffffffffffff' +
  'ffffffffffffffff';

describe('METADATA v5', () => {
  it('golden bytes: the request is v3 with version 5', () => {
    const frame = encodeMetadataRequestV5(5, { topics: ['x'], minRevision: 9, flags: 0 });
    assert.equal(
      frame.toString('hex'),
      '00000018' + '0003' + '0005' + '00000005' + '00000001' + '000178' + '0000000000000009' + '00',
    );
    const decoded = decodeRequest(body(frame));
    assert.equal(decoded.apiVersion, 5);
    assert.deepEqual(decoded.body, { topics: ['x'], minRevision: 9, flags: 0 });
  });

  it('golden bytes: after the offsets, one byte says where they come from (here a copy, the primary gone)', () => {
    const frame = encodeMetadataResponseV5(4, answer);
    assert.equal(frame.toString('hex'), answerHex);
    assert.deepEqual(decodeMetadataResponseV5(readResponseFrame(body(frame)).body), answer);
  });

  it('an offsets byte other than 0, 1 or 2 is refused naming the field', () => {
    const frame = Buffer.from(answerHex, 'hex');
    frame.writeInt8(3, 4 + 4 + 2 + 8 + 4 + 3 + 4 + 20);
    assert.throws(
      () => decodeMetadataResponseV5(readResponseFrame(body(frame)).body),
      /topics\[0\]\.partitions\[0\]\.offsets: 3, expected 0 \(PRIMARY\), 1 \(COPY\) or 2 \(UNKNOWN\)/,
    );
  });
});
