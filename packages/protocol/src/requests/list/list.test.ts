import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body, i32, i64, rawRequest, str } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import { decodeListResponse, encodeListRequest, encodeListResponse, type ListResponse } from './v1.js';

describe('LIST v1', () => {
  it('golden bytes: a request with a selector and no watch', () => {
    assert.equal(
      encodeListRequest(9, { selector: 'team=p', watchRevision: -1, maxWaitMs: 0 }).toString('hex'),
      '0000001c' + '0005' + '0001' + '00000009' + '0006' + '7465616d3d70' + 'ffffffffffffffff' + '00000000',
    );
  });

  it('round trip request: a watch from a revision with its wait', () => {
    const req = { selector: 'a in (x,y), !b', watchRevision: 41, maxWaitMs: 60_000 };
    assert.deepEqual(decodeRequest(body(encodeListRequest(3, req))).body, req);
  });

  it('a watch revision below -1 and a negative wait are CORRUPT_REQUEST', () => {
    for (const [payload, message] of [
      [Buffer.concat([str(''), i64(-2), i32(0)]), /watchRevision: -2/],
      [Buffer.concat([str(''), i64(0), i32(-1)]), /maxWaitMillis: -1, expected >= 0/],
    ] as const) {
      assert.throws(
        () => decodeRequest(rawRequest(5, 1, 77, payload)),
        (e: unknown) =>
          e instanceof RequestRefusal && e.code === ErrorCode.CORRUPT_REQUEST && message.test(e.message),
      );
    }
  });

  it('golden bytes and round trip response: the store revision, each spec and a route per partition', () => {
    const res: ListResponse = {
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
          routes: [{ primary: 'h:1', replicas: [] }],
        },
      ],
    };
    const frame = encodeListResponse(9, res);
    assert.equal(
      frame.toString('hex'),
      '0000004e' +
        '00000009' +
        '0000' +
        '0000000000000005' +
        '00000001' +
        '000161' +
        '00000001' +
        '00000000' +
        'ffffffffffffffff' +
        'ffffffffffffffff' +
        '00000400' +
        '00000000' +
        '0001' +
        '0000' +
        '0000000000000004' +
        '00000001' +
        '0003683a31' +
        '00000000',
    );
    assert.deepEqual(decodeListResponse(readResponseFrame(body(frame)).body), res);
  });

  it('a response claiming more topics than it holds is a protocol error, not a huge allocation', () => {
    const bad = Buffer.from('0000000000000001' + '7fffffff', 'hex');
    assert.throws(() => decodeListResponse(bad), /topicCount: 2147483647/);
  });
});
