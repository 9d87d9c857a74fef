import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import {
  authDataBytesMax,
  decodeAuthenticateResponse,
  decodeAuthenticationFailed,
  encodeAuthenticateRequest,
  encodeAuthenticateResponse,
  encodeAuthenticationFailedResponse,
} from './v1.js';

describe('AUTHENTICATE v1', () => {
  it('golden bytes: mechanism and data; the answer complete, data, principal, expiry', () => {
    const frame = encodeAuthenticateRequest(3, { mechanism: 'TOKEN', data: Buffer.from('ab') });
    assert.equal(
      frame.toString('hex'),
      '00000015' + '000a' + '0001' + '00000003' + '0005544f4b454e' + '00000002' + '6162',
    );
    assert.deepEqual(decodeRequest(body(frame)).body, { mechanism: 'TOKEN', data: Buffer.from('ab') });
    const res = { complete: true, data: Buffer.from('v'), principal: 'al', expiresAtMs: 1000 };
    const answer = encodeAuthenticateResponse(3, res);
    assert.equal(
      answer.toString('hex'),
      '00000018' + '00000003' + '0000' + '01' + '0000000176' + '0002616c' + '00000000000003e8',
    );
    assert.deepEqual(decodeAuthenticateResponse(readResponseFrame(body(answer)).body), res);
  });

  it('AUTHENTICATION_FAILED carries its reason', () => {
    const answer = encodeAuthenticationFailedResponse(4, 'no');
    assert.equal(answer.toString('hex'), '0000000a' + '00000004' + '0014' + '00026e6f');
    const frame = readResponseFrame(body(answer));
    assert.equal(frame.errorCode, ErrorCode.AUTHENTICATION_FAILED);
    assert.deepEqual(decodeAuthenticationFailed(frame.body), { reason: 'no' });
  });

  it('data over the limit is CORRUPT_REQUEST, not held', () => {
    const big = encodeAuthenticateRequest(1, {
      mechanism: 'TOKEN',
      data: Buffer.alloc(authDataBytesMax + 1),
    });
    assert.throws(
      () => decodeRequest(body(big)),
      (e: unknown) => e instanceof RequestRefusal && e.code === ErrorCode.CORRUPT_REQUEST,
    );
  });
});
