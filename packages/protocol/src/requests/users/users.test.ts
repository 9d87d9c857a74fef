import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body, rawRequest } from '../../test-support/frames.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import { decodeUsersResponse, encodeUsersRequest, encodeUsersResponse, UsersOp } from './v1.js';

describe('USERS v1', () => {
  it('golden bytes: list, remove and upsert; the answer lists the users', () => {
    assert.equal(
      encodeUsersRequest(1, { op: UsersOp.LIST }).toString('hex'),
      '0000000b' + '000b' + '0001' + '00000001' + '01' + '0000',
    );
    assert.equal(
      encodeUsersRequest(2, { op: UsersOp.REMOVE, name: 'a' }).toString('hex'),
      '0000000c' + '000b' + '0001' + '00000002' + '03' + '000161',
    );
    const credential = {
      salt: Buffer.from('s'),
      iterations: 4096,
      storedKey: Buffer.from('k'),
      serverKey: Buffer.from('v'),
    };
    const upsert = encodeUsersRequest(3, { op: UsersOp.UPSERT, name: 'a', credential });
    assert.equal(
      upsert.toString('hex'),
      '0000001f' +
        '000b' +
        '0001' +
        '00000003' +
        '02' +
        '000161' +
        '0000000173' +
        '00001000' +
        '000000016b' +
        '0000000176',
    );
    assert.deepEqual(decodeRequest(body(upsert)).body, { op: UsersOp.UPSERT, name: 'a', credential });
    const users = [{ name: 'a', mechanism: 'SCRAM-SHA-256', iterations: 4096 }];
    const answer = encodeUsersResponse(3, users);
    assert.equal(
      answer.toString('hex'),
      '00000020' +
        '00000003' +
        '0000' +
        '00000001' +
        '000161' +
        '000d' +
        Buffer.from('SCRAM-SHA-256').toString('hex') +
        '00001000',
    );
    assert.deepEqual(decodeUsersResponse(readResponseFrame(body(answer)).body), users);
  });

  it('an unknown op is CORRUPT_REQUEST naming the ops', () => {
    assert.throws(
      () => decodeRequest(rawRequest(11, 1, 5, Buffer.from('090000', 'hex'))),
      (e: unknown) =>
        e instanceof RequestRefusal &&
        e.code === ErrorCode.CORRUPT_REQUEST &&
        /op: 9, expected 1 \(LIST\)/.test(e.message),
    );
  });
});
