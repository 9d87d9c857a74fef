import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../errors.js';
import { readResponseFrame } from '../../frame/header.js';
import { fetchableRecordBytesMax, frameBytesMax } from '../../limits.js';
import { encodeStoredRecords } from '../../records/stored-records.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest } from '../decode-request.js';
import { decodeFetchResponse, encodeFetchRequestV1, encodeFetchResponseHeader } from './v1.js';
import { encodeFetchRequestV2 } from './v2.js';
import {
  decodeFetchResponseV5,
  decodeRecordsLost,
  encodeFetchRequestV5,
  encodeFetchResponseHeaderV5,
  encodeRecordsLostResponse,
  fetchResponseHeaderV5Bytes,
  NO_EPOCH,
} from './v5.js';

const req = {
  topic: 't',
  partition: 2,
  fetchOffset: 2 ** 33 + 1,
  maxBytes: 1024,
  maxWaitMs: 500,
  minBytes: 10,
};

describe('FETCH v1 and v2', () => {
  it('golden bytes: a v2 request carries the wait and minimum after v1 fields', () => {
    assert.equal(
      encodeFetchRequestV2(1, req).toString('hex'),
      '00000023' +
        '0002' +
        '0002' +
        '00000001' +
        '000174' +
        '00000002' +
        '0000000200000001' +
        '00000400' +
        '000001f4' +
        '0000000a',
    );
  });

  it('round trip v2: every field the client sends reaches the broker', () => {
    const decoded = decodeRequest(body(encodeFetchRequestV2(42, req)));
    assert.equal(decoded.apiVersion, 2);
    assert.deepEqual(decoded.body, req);
  });

  it('round trip v1: no wait fields, so the broker answers at once', () => {
    const decoded = decodeRequest(body(encodeFetchRequestV1(42, req)));
    assert.equal(decoded.apiVersion, 1);
    assert.deepEqual(decoded.body, { ...req, maxWaitMs: 0, minBytes: 0 });
  });

  it('round trip response: header written by the broker, payload appended as file bytes', () => {
    const payload = encodeStoredRecords([Buffer.from('a'), Buffer.from('bc')]);
    const frame = Buffer.concat([encodeFetchResponseHeader(3, 77, payload.length), payload]);
    assert.equal(frame.readInt32BE(0), frame.length - 4, 'frameLength counts everything after it');
    const resp = readResponseFrame(body(frame));
    assert.equal(resp.correlationId, 3);
    const decoded = decodeFetchResponse(resp.body);
    assert.equal(decoded.highWatermark, 77);
    assert.deepEqual(decoded.payload, payload);
  });

  it('payloadBytes that disagree with the frame are a protocol error, in both directions', () => {
    const payload = encodeStoredRecords([Buffer.from('abc')]);
    const header = encodeFetchResponseHeader(3, 1, payload.length);
    const longer = readResponseFrame(body(Buffer.concat([header, payload, Buffer.from([0])])));
    assert.throws(() => decodeFetchResponse(longer.body), /payloadBytes: 11, but 12 bytes remain/);
    const shorter = readResponseFrame(body(Buffer.concat([header, payload.subarray(1)])));
    assert.throws(() => decodeFetchResponse(shorter.body), /payloadBytes: 11, but 10 bytes remain/);
  });
});

describe('FETCH v5 (epochs)', () => {
  const v5 = { topic: 't', partition: 0, fetchOffset: 5, maxBytes: 1 << 20, maxWaitMs: 500, minBytes: 1 };

  it('golden bytes: a v5 request is v2 with the last epoch read after it', () => {
    assert.equal(
      encodeFetchRequestV5(2, { ...v5, lastEpoch: 3 }).toString('hex'),
      '00000027' +
        '0002' +
        '0005' +
        '00000002' +
        '000174' +
        '00000000' +
        '0000000000000005' +
        '00100000' +
        '000001f4' +
        '00000001' +
        '00000003',
    );
  });

  it('round trip v5: the last epoch reaches the broker, -1 (none) included', () => {
    for (const lastEpoch of [NO_EPOCH, 0, 7]) {
      const decoded = decodeRequest(body(encodeFetchRequestV5(9, { ...v5, lastEpoch })));
      assert.equal(decoded.apiVersion, 5);
      assert.deepEqual(decoded.body, { ...v5, lastEpoch });
    }
  });

  it('a v5 request without its last epoch, or with one below -1, is refused naming the field', () => {
    const frame = encodeFetchRequestV5(9, { ...v5, lastEpoch: -2 });
    assert.throws(() => decodeRequest(body(frame)), /lastEpoch: -2, expected >= -1/);
    const short = encodeFetchRequestV2(9, v5);
    short.writeInt16BE(5, 6);
    assert.throws(() => decodeRequest(body(short)), /lastEpoch: needs 4 bytes/);
  });

  it('golden bytes: a v5 answer carries the epoch at fetchOffset and where the next begins', () => {
    const header = encodeFetchResponseHeaderV5(3, 77, { epoch: 1, epochEndOffset: -1 }, 0);
    assert.equal(
      header.toString('hex'),
      '0000001e' + '00000003' + '0000' + '000000000000004d' + '00000001' + 'ffffffffffffffff' + '00000000',
    );
    const payload = encodeStoredRecords([Buffer.from('a')]);
    const frame = Buffer.concat([
      encodeFetchResponseHeaderV5(3, 77, { epoch: 2, epochEndOffset: 9 }, payload.length),
      payload,
    ]);
    const decoded = decodeFetchResponseV5(readResponseFrame(body(frame)).body);
    assert.deepEqual(
      { ...decoded, payload: Buffer.from(decoded.payload) },
      { highWatermark: 77, epoch: 2, epochEndOffset: 9, payload },
    );
  });

  it('golden bytes: RECORDS_LOST names the epoch and where it ended', () => {
    const frame = encodeRecordsLostResponse(2, { epoch: 0, endOffset: 10 });
    assert.equal(frame.toString('hex'), '00000012' + '00000002' + '0011' + '00000000' + '000000000000000a');
    const resp = readResponseFrame(body(frame));
    assert.equal(resp.errorCode, ErrorCode.RECORDS_LOST);
    assert.deepEqual(decodeRecordsLost(resp.body), { epoch: 0, endOffset: 10 });
  });

  it('the largest record the writer takes fits a v5 answer whole', () => {
    assert.equal(fetchableRecordBytesMax + fetchResponseHeaderV5Bytes, frameBytesMax + 4);
  });
});
