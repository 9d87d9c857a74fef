import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body, i32, rawRequest, str } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import {
  decodeListFragmentsResponse,
  encodeListFragmentsRequest,
  encodeListFragmentsResponse,
  FragmentLocation,
  type PartitionFragments,
} from './v1.js';

describe('LIST_FRAGMENTS v1', () => {
  it('golden bytes: a request for one partition', () => {
    assert.equal(
      encodeListFragmentsRequest(9, { topic: 'ab', partition: 2 }).toString('hex'),
      '00000010' + '0007' + '0001' + '00000009' + '0002' + '6162' + '00000002',
    );
  });

  it('round trip request: every partition is -1; below it is CORRUPT_REQUEST', () => {
    const req = { topic: 'orders', partition: -1 };
    assert.deepEqual(decodeRequest(body(encodeListFragmentsRequest(3, req))).body, req);
    assert.throws(
      () => decodeRequest(rawRequest(7, 1, 77, Buffer.concat([str('orders'), i32(-2)]))),
      (e: unknown) =>
        e instanceof RequestRefusal &&
        e.code === ErrorCode.CORRUPT_REQUEST &&
        /partition: -2, expected >= 0, or -1/.test(e.message),
    );
  });

  it('golden bytes and round trip response: a partition with a stored and a local segment', () => {
    const res: PartitionFragments[] = [
      {
        partition: 0,
        logStartOffset: 0,
        highWatermark: 7,
        fragments: [
          {
            baseOffset: 0,
            endOffset: 5,
            sizeBytes: 300,
            location: FragmentLocation.STORE,
            persistedMs: 1000,
          },
          { baseOffset: 5, endOffset: 7, sizeBytes: 40, location: FragmentLocation.LOCAL, persistedMs: -1 },
        ],
      },
    ];
    const frame = encodeListFragmentsResponse(4, res);
    assert.equal(
      frame.toString('hex'),
      '00000064' + // 6 header bytes + 4 + 24 + 2 x 33
        '00000004' +
        '0000' +
        '00000001' +
        '00000000' +
        '0000000000000000' +
        '0000000000000007' +
        '00000002' +
        ('0000000000000000' + '0000000000000005' + '000000000000012c' + '02' + '00000000000003e8') +
        ('0000000000000005' + '0000000000000007' + '0000000000000028' + '01' + 'ffffffffffffffff'),
    );
    const { body: answer } = readResponseFrame(frame.subarray(4));
    assert.deepEqual(decodeListFragmentsResponse(answer), res);
  });

  it('a response with a location outside 1..3 or an end before its base is refused, naming the field', () => {
    const good = encodeListFragmentsResponse(1, [
      {
        partition: 0,
        logStartOffset: 0,
        highWatermark: 1,
        fragments: [
          { baseOffset: 0, endOffset: 1, sizeBytes: 9, location: FragmentLocation.BOTH, persistedMs: 5 },
        ],
      },
    ]).subarray(4 + 6);
    const badLocation = Buffer.from(good);
    badLocation[4 + 24 + 24] = 4;
    assert.throws(() => decodeListFragmentsResponse(badLocation), /fragments\[0\]\.location: 4/);
    const badEnd = Buffer.from(good);
    badEnd.writeBigInt64BE(0n, 4 + 24 + 8);
    badEnd.writeBigInt64BE(3n, 4 + 24);
    assert.throws(
      () => decodeListFragmentsResponse(badEnd),
      /fragments\[0\]\.endOffset: 0, expected >= baseOffset \(3\)/,
    );
  });
});
