import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import {
  decodeMetadataResponseLocal,
  encodeMetadataRequestV3,
  encodeMetadataResponseLocal,
  MetadataFlag,
} from './v3.js';

describe('METADATA v3', () => {
  it('golden bytes: v1 topics, then the minimum revision and the flags', () => {
    const frame = encodeMetadataRequestV3(5, { topics: ['x'], minRevision: 9, flags: MetadataFlag.LOCAL });
    assert.equal(
      frame.toString('hex'),
      '00000018' + '0003' + '0003' + '00000005' + '00000001' + '000178' + '0000000000000009' + '01',
    );
    const decoded = decodeRequest(body(frame));
    assert.deepEqual(decoded.body, { topics: ['x'], minRevision: 9, flags: 1 });
  });

  it('golden bytes: a LOCAL answer is the revision, then v1 entries without routes', () => {
    const res = {
      revision: 3,
      topics: [{ name: 'a', partitions: [{ partition: 0, logStartOffset: 1, highWatermark: 2 }] }],
    };
    const frame = encodeMetadataResponseLocal(4, res);
    assert.equal(
      frame.toString('hex'),
      '0000002d' +
        '00000004' +
        '0000' +
        '0000000000000003' +
        '00000001' +
        '000161' +
        '00000001' +
        '00000000' +
        '0000000000000001' +
        '0000000000000002',
    );
    assert.deepEqual(decodeMetadataResponseLocal(readResponseFrame(body(frame)).body), res);
    frame.writeBigInt64BE(-1n, frame.length - 8);
    assert.throws(
      () => decodeMetadataResponseLocal(readResponseFrame(body(frame)).body),
      /topics\[0\]\.partitions\[0\]\.highWatermark/,
    );
  });

  it('every topic with no topics named, as in v1', () => {
    const frame = encodeMetadataRequestV3(1, { topics: [], minRevision: 0, flags: 0 });
    assert.deepEqual(decodeRequest(body(frame)).body, { topics: [], minRevision: 0, flags: 0 });
  });

  for (const [what, mutate] of [
    ['a negative minimum revision', (f: Buffer) => f.writeBigInt64BE(-1n, f.length - 9)],
    ['an unknown flag bit', (f: Buffer) => f.writeInt8(2, f.length - 1)],
    ['a frame cut before the flags', null],
  ] as const) {
    it(`refuses ${what} as CORRUPT_REQUEST`, () => {
      let frame = encodeMetadataRequestV3(3, { topics: ['ab'], minRevision: 1, flags: 0 });
      if (mutate === null) {
        frame = frame.subarray(0, frame.length - 1);
        frame.writeInt32BE(frame.length - 4, 0);
      } else mutate(frame);
      assert.throws(
        () => decodeRequest(body(frame)),
        (e: unknown) => e instanceof RequestRefusal && e.code === ErrorCode.CORRUPT_REQUEST,
      );
    });
  }
});
