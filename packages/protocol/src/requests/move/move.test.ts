import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import { decodeMoveResponse, encodeMoveRequest, encodeMoveResponse, MoveFlag } from './v1.js';

describe('MOVE v1', () => {
  it('golden bytes: topic, partition, member, flags; round trip', () => {
    const req = { topic: 't', partition: 2, member: 'b2', flags: MoveFlag.ABANDON_RECORDS };
    const frame = encodeMoveRequest(6, req);
    assert.equal(
      frame.toString('hex'),
      '00000014' + '0008' + '0001' + '00000006' + '000174' + '00000002' + '00026232' + '01',
    );
    assert.deepEqual(decodeRequest(body(frame)).body, req);
    const answer = encodeMoveResponse(6, 12);
    assert.equal(answer.toString('hex'), '0000000e' + '00000006' + '0000' + '000000000000000c');
    assert.deepEqual(decodeMoveResponse(readResponseFrame(body(answer)).body), { revision: 12 });
  });

  it('refuses an unknown flag and a negative partition as CORRUPT_REQUEST', () => {
    for (const bad of [
      { topic: 't', partition: 0, member: 'b', flags: 8 },
      { topic: 't', partition: -1, member: 'b', flags: 0 },
    ]) {
      assert.throws(
        () => decodeRequest(body(encodeMoveRequest(1, bad))),
        (e: unknown) => e instanceof RequestRefusal && e.code === ErrorCode.CORRUPT_REQUEST,
      );
    }
  });
});
