import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import {
  decodeReplicateResponse,
  encodeReplicateRequest,
  encodeReplicateResponse,
  ReplicateFlag,
  type ReplicateRequest,
} from './v1.js';

const request: ReplicateRequest = {
  topic: 't',
  partition: 1,
  epoch: 3,
  recordsEpoch: 2,
  baseOffset: 5,
  prevEpoch: 2,
  commitOffset: 4,
  flags: ReplicateFlag.FORCED,
  count: 1,
  stored: Buffer.from('00000001' + 'aabbccdd' + '78', 'hex'),
};

describe('REPLICATE v1', () => {
  it('golden bytes: the header piece, then the stored bytes as they are; round trip', () => {
    const pieces = encodeReplicateRequest(7, request);
    assert.equal(pieces.length, 2);
    assert.equal(pieces[1], request.stored, 'the stored bytes are sent as given, not copied');
    const frame = Buffer.concat(pieces);
    assert.equal(
      frame.toString('hex'),
      '0000003d' +
        '0009' +
        '0001' +
        '00000007' +
        '000174' +
        '00000001' +
        '00000003' +
        '00000002' +
        '0000000000000005' +
        '00000002' +
        '0000000000000004' +
        '01' +
        '00000001' +
        '00000009' +
        '00000001aabbccdd78',
    );
    assert.deepEqual(decodeRequest(body(frame)).body, request);
  });

  it('an answer carries the log end, the last epoch and the epoch the replica knows', () => {
    const answer = { code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 9, lastEpoch: 2, knownEpoch: 3 };
    const response = readResponseFrame(body(encodeReplicateResponse(7, answer)));
    assert.deepEqual(decodeReplicateResponse(response.errorCode, response.body), answer);
    assert.deepEqual(decodeReplicateResponse(ErrorCode.CORRUPT_REQUEST, Buffer.alloc(0)), {
      code: ErrorCode.CORRUPT_REQUEST,
      logEndOffset: -1,
      lastEpoch: -1,
      knownEpoch: -1,
    });
  });

  it('refuses a stored length that is not the rest of the frame, records with TRUNCATE, unknown flags', () => {
    const cut = Buffer.concat(encodeReplicateRequest(1, request)).subarray(0, -1);
    cut.writeInt32BE(cut.length - 4, 0);
    const truncating = Buffer.concat(
      encodeReplicateRequest(1, { ...request, flags: ReplicateFlag.TRUNCATE }),
    );
    const unknownFlag = Buffer.concat(encodeReplicateRequest(1, { ...request, flags: 4 }));
    for (const frame of [cut, truncating, unknownFlag]) {
      assert.throws(
        () => decodeRequest(body(frame)),
        (e: unknown) => e instanceof RequestRefusal && e.code === ErrorCode.CORRUPT_REQUEST,
      );
    }
  });
});
