import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { body, i8, i32, i64, rawRequest, str } from '../../test-support/frames.js';
import { topicSpecWithDefaults } from '../../topics/spec.js';
import { decodeRequest, RequestRefusal } from '../decode-request.js';
import {
  decodeInvalidArgument,
  decodeRevisionMismatch,
  encodeInvalidArgumentResponse,
  encodeRevisionMismatchResponse,
} from '../error-details.js';
import { type ApplyRequest, decodeApplyResponse, encodeApplyRequest, encodeApplyResponse } from './v1.js';
import { encodeApplyRequestV2 } from './v2.js';

const spec = {
  name: 'a',
  partitions: 2,
  labels: { team: 'p' },
  retentionBytes: -1,
  retentionMs: -2,
  segmentBytes: 0,
  flags: 1,
  replication: 1,
  storeUrl: '',
  revision: 0,
};
const specHex =
  '000161' +
  '00000002' +
  '00000001' +
  '00047465616d' +
  '000170' +
  'ffffffffffffffff' +
  'fffffffffffffffe' +
  '00000000' +
  '00000001' +
  '0001' +
  '0000' +
  '0000000000000000';

describe('APPLY v1', () => {
  it('golden bytes: a delete with its expected revision', () => {
    const frame = encodeApplyRequest(7, {
      dryRun: false,
      changes: [{ op: 'delete', name: 'x', expectedRevision: 3 }],
    });
    assert.equal(
      frame.toString('hex'),
      '00000019' + '0004' + '0001' + '00000007' + '00' + '00000001' + '02' + '000178' + '0000000000000003',
    );
  });

  it('golden bytes: an upsert carries the whole spec, labels sorted, dry run set', () => {
    const frame = encodeApplyRequest(7, { dryRun: true, changes: [{ op: 'upsert', spec }] });
    assert.equal(frame.toString('hex'), `000000460004000100000007010000000101${specHex}`);
  });

  it('round trip: upserts and deletes arrive as sent, in order', () => {
    const req: ApplyRequest = {
      dryRun: false,
      changes: [
        { op: 'upsert', spec: { ...spec, labels: { z: '1', a: '', 'x.y/z': 'v:w@q' } } },
        { op: 'delete', name: 'gone', expectedRevision: -1 },
        { op: 'upsert', spec: topicSpecWithDefaults({ name: 'заказы', partitions: 10_000 }) },
      ],
    };
    const decoded = decodeRequest(body(encodeApplyRequest(1, req)));
    assert.deepEqual(decoded.body, req);
  });

  it('structure that cannot be trusted is CORRUPT_REQUEST naming the field', () => {
    const refused = (payload: Buffer, message: RegExp) =>
      assert.throws(
        () => decodeRequest(rawRequest(4, 1, 77, payload)),
        (e: unknown) =>
          e instanceof RequestRefusal &&
          e.code === ErrorCode.CORRUPT_REQUEST &&
          e.correlationId === 77 &&
          message.test(e.message),
      );
    refused(Buffer.concat([i8(2), i32(0)]), /dryRun: 2, expected 0 or 1/);
    refused(Buffer.concat([i8(0), i32(-1)]), /changeCount: -1/);
    refused(Buffer.concat([i8(0), i32(1000)]), /changeCount: 1000, expected at most 0/);
    refused(
      Buffer.concat([i8(0), i32(1), i8(3), str('x'), i64(0)]),
      /changes\[0\].op: 3, expected 1 \(upsert\) or 2/,
    );
    const hugeLabels = Buffer.concat([
      i8(0),
      i32(1),
      i8(1),
      str('a'),
      i32(1),
      i32(2 ** 31 - 1),
      Buffer.alloc(40),
    ]);
    refused(hugeLabels, /changes\[0\].spec.labelCount: 2147483647/);
  });

  it('golden bytes: the answer is the new revision', () => {
    const frame = encodeApplyResponse(2, 9);
    assert.equal(frame.toString('hex'), '0000000e' + '00000002' + '0000' + '0000000000000009');
    assert.deepEqual(decodeApplyResponse(readResponseFrame(body(frame)).body), { revision: 9 });
  });

  it('golden bytes: REVISION_MISMATCH names the change, the topic and both revisions', () => {
    const m = { changeIndex: 1, topic: 'a', expectedRevision: 3, actualRevision: 4 };
    const frame = encodeRevisionMismatchResponse(2, m);
    assert.equal(
      frame.toString('hex'),
      '0000001d' + '00000002' + '0007' + '00000001' + '000161' + '0000000000000003' + '0000000000000004',
    );
    const { errorCode, body: b } = readResponseFrame(body(frame));
    assert.equal(errorCode, ErrorCode.REVISION_MISMATCH);
    assert.deepEqual(decodeRevisionMismatch(b), m);
  });

  it('golden bytes: INVALID_ARGUMENT carries the index and the message', () => {
    const frame = encodeInvalidArgumentResponse(2, { index: -1, message: 'm' });
    assert.equal(frame.toString('hex'), '0000000d' + '00000002' + '000b' + 'ffffffff' + '00016d');
    assert.deepEqual(decodeInvalidArgument(readResponseFrame(body(frame)).body), { index: -1, message: 'm' });
  });

  it('a message longer than a string can hold is cut, not a crash', () => {
    const frame = encodeInvalidArgumentResponse(2, { index: 0, message: 'é'.repeat(40_000) });
    const decoded = decodeInvalidArgument(readResponseFrame(body(frame)).body);
    assert.ok(Buffer.byteLength(decoded.message) <= 0xffff);
    assert.match(decoded.message, /^é+$/);
  });
});

describe('APPLY v2', () => {
  it('golden bytes: a delete purging the store is op 3, everything else as in v1', () => {
    const frame = encodeApplyRequestV2(7, {
      dryRun: true,
      changes: [
        { op: 'delete', name: 'x', expectedRevision: 3, purgeStore: true },
        { op: 'delete', name: 'y', expectedRevision: -1 },
      ],
    });
    assert.equal(
      frame.toString('hex'),
      '00000025' +
        '0004' +
        '0002' +
        '00000007' +
        '01' +
        '00000002' +
        '03' +
        '000178' +
        '0000000000000003' +
        '02' +
        '000179' +
        'ffffffffffffffff',
    );
    assert.deepEqual(decodeRequest(body(frame)).body, {
      dryRun: true,
      changes: [
        { op: 'delete', name: 'x', expectedRevision: 3, purgeStore: true },
        { op: 'delete', name: 'y', expectedRevision: -1 },
      ],
    });
  });

  it('v1 cannot carry a purge: its encoder refuses one, its decoder refuses op 3 (nothing older misreads it)', () => {
    const purge: ApplyRequest = {
      dryRun: false,
      changes: [{ op: 'delete', name: 'x', expectedRevision: -1, purgeStore: true }],
    };
    assert.throws(() => encodeApplyRequest(1, purge), /needs APPLY v2/);
    const asV1 = encodeApplyRequestV2(1, purge);
    asV1.writeInt16BE(1, 6); // the same bytes under version 1
    assert.throws(
      () => decodeRequest(body(asV1)),
      (e: unknown) =>
        e instanceof RequestRefusal &&
        e.code === ErrorCode.CORRUPT_REQUEST &&
        /changes\[0\].op: 3, expected 1 \(upsert\) or 2 \(delete\)/.test(e.message),
    );
  });

  it('an op past 3 is CORRUPT_REQUEST naming the ops v2 has', () => {
    assert.throws(
      () => decodeRequest(rawRequest(4, 2, 5, Buffer.concat([i8(0), i32(1), i8(4), str('x'), i64(0)]))),
      (e: unknown) =>
        e instanceof RequestRefusal &&
        e.code === ErrorCode.CORRUPT_REQUEST &&
        /changes\[0\].op: 4, expected 1 \(upsert\), 2 \(delete\) or 3/.test(e.message),
    );
  });
});
