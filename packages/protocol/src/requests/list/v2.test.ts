import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { LAG_UNKNOWN, ReplicaFlag } from '../../topics/route-v2.js';
import { decodeRequest } from '../decode-request.js';
import { decodeListResponseV2, encodeListRequestV2, encodeListResponseV2 } from './v2.js';

describe('LIST v2', () => {
  it('golden bytes: the request is v1 with version 2', () => {
    const frame = encodeListRequestV2(9, { selector: 'team=p', watchRevision: -1, maxWaitMs: 0 });
    assert.equal(
      frame.toString('hex'),
      '0000001c' + '0005' + '0002' + '00000009' + '0006' + '7465616d3d70' + 'ffffffffffffffff' + '00000000',
    );
    assert.equal(decodeRequest(body(frame)).apiVersion, 2);
  });

  it('golden bytes: routes carry the epoch and each replica, lags unknown', () => {
    const res = {
      revision: 5,
      topics: [
        {
          spec: {
            name: 'a',
            partitions: 1,
            labels: {},
            retentionBytes: -1,
            retentionMs: -1,
            segmentBytes: 1024,
            flags: 0,
            replication: 1,
            storeUrl: '',
            revision: 4,
          },
          routes: [
            {
              epoch: 0,
              primary: 'h:1',
              replicas: [
                {
                  member: 'b1',
                  address: 'h:1',
                  zone: '',
                  flags: ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE,
                  lagRecords: LAG_UNKNOWN,
                  lagMillis: LAG_UNKNOWN,
                },
              ],
            },
          ],
        },
      ],
    };
    const frame = encodeListResponseV2(9, res);
    const hex = frame.toString('hex');
    // After the spec (as in LIST v1): one route, epoch 0, primary h:1, one replica.
    assert.ok(
      hex.endsWith(
        '00000001' +
          '00000000' +
          '0003683a31' +
          '00000001' +
          '00026231' +
          '0003683a31' +
          '0000' +
          '03' +
          'ffffffffffffffff' +
          'ffffffffffffffff',
      ),
      hex,
    );
    assert.deepEqual(decodeListResponseV2(readResponseFrame(body(frame)).body), res);
  });
});
