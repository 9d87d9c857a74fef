import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../errors.js';
import { apiKeyMax } from '../api-table/table.js';
import { i8, i32, i64, rawRequest, str } from '../test-support/frames.js';
import { decodeRequest, RequestRefusal } from './decode-request.js';

const CORRUPT = ErrorCode.CORRUPT_REQUEST;
const UNSUPPORTED = ErrorCode.UNSUPPORTED_VERSION;

/** Asserts the frame is refused with `code`, echoing correlationId 77, and a message matching `message`. */
function refused(frame: Buffer, code: number, message: RegExp, silent = false): void {
  assert.throws(
    () => decodeRequest(frame),
    (error: unknown) => {
      assert.ok(error instanceof RequestRefusal, String(error));
      assert.equal(error.code, code, error.message);
      assert.equal(error.correlationId, 77);
      assert.equal(error.silent, silent, 'silent only for ack NONE');
      assert.match(error.message, message);
      return true;
    },
  );
}

const produce = (...parts: Buffer[]) => rawRequest(1, 1, 77, Buffer.concat(parts));
const record = (bytes: Buffer) => Buffer.concat([i32(bytes.length), bytes]);
const fetch2 = (...parts: Buffer[]) => rawRequest(2, 2, 77, Buffer.concat(parts));
const metadata = (...parts: Buffer[]) => rawRequest(3, 1, 77, Buffer.concat(parts));
const goodRecords = Buffer.concat([i32(1), record(Buffer.from('x'))]);

describe('request validation: each rule gets its code and says where', () => {
  it('unknown apiKey is UNSUPPORTED_VERSION with the id echoed', () => {
    refused(rawRequest(apiKeyMax + 1, 1, 77, Buffer.alloc(0)), UNSUPPORTED, new RegExp(`apiKey: ${apiKeyMax + 1}`));
    refused(rawRequest(-1, 1, 77, Buffer.alloc(0)), UNSUPPORTED, /apiKey: -1/);
  });

  it('a version the API does not have is UNSUPPORTED_VERSION', () => {
    refused(rawRequest(1, 4, 77, Buffer.alloc(0)), UNSUPPORTED, /apiVersion: 4/);
    refused(rawRequest(2, 0, 77, Buffer.alloc(0)), UNSUPPORTED, /apiVersion: 0/);
    refused(rawRequest(2, 6, 77, Buffer.alloc(0)), UNSUPPORTED, /apiVersion: 6/);
    refused(rawRequest(3, 6, 77, Buffer.alloc(0)), UNSUPPORTED, /apiVersion: 6/);
    refused(rawRequest(5, 3, 77, Buffer.alloc(0)), UNSUPPORTED, /apiVersion: 3/);
    refused(rawRequest(4, 3, 77, Buffer.alloc(0)), UNSUPPORTED, /apiVersion: 3/);
  });

  it('PRODUCE: empty and 250-character topic names', () => {
    refused(produce(str(''), i32(0), i8(1), goodRecords), CORRUPT, /topic: "" is empty/);
    refused(produce(str('t'.repeat(250)), i32(0), i8(1), goodRecords), CORRUPT, /250 characters/);
  });

  it('PRODUCE: a topic name seen before is matched by every byte, not mistaken for a neighbour', () => {
    const topicOf = (name: string) => {
      const req = decodeRequest(produce(str(name), i32(0), i8(1), goodRecords));
      assert.ok(req.apiKey === 1);
      return req.body.topic;
    };
    assert.equal(topicOf('orders'), 'orders');
    assert.equal(topicOf('orders'), 'orders', 'the second time, from the names already seen');
    assert.equal(topicOf('orderz'), 'orderz', 'same length, last byte differs');
    assert.equal(topicOf('Orders'), 'Orders', 'same length, first byte differs');
    assert.equal(topicOf('ordersX'), 'ordersX');
    assert.equal(topicOf('主题'), '主题');
    assert.equal(topicOf('主题'), '主题');
    refused(produce(str('order '), i32(0), i8(1), goodRecords), CORRUPT, /topic: "order " has a character/);
  });

  it('PRODUCE: invalid characters and invalid UTF-8 in the topic', () => {
    refused(produce(str('a b'), i32(0), i8(1), goodRecords), CORRUPT, /topic: "a b" has a character/);
    refused(produce(str(Buffer.from([0x61, 0xc3])), i32(0), i8(1), goodRecords), CORRUPT, /not valid UTF-8/);
  });

  it('PRODUCE: negative partition', () => {
    refused(produce(str('t'), i32(-1), i8(1), goodRecords), CORRUPT, /partition: -1, expected >= 0/);
  });

  it('PRODUCE: ack policy 3, 7 and -1', () => {
    for (const ack of [3, 7, -1]) {
      refused(produce(str('t'), i32(0), i8(ack), goodRecords), CORRUPT, new RegExp(`ackPolicy: ${ack}`));
    }
  });

  it('PRODUCE: zero and negative record counts', () => {
    refused(produce(str('t'), i32(0), i8(1), i32(0)), CORRUPT, /recordCount: 0, expected > 0/);
    refused(produce(str('t'), i32(0), i8(1), i32(-5)), CORRUPT, /recordCount: -5/);
  });

  it('PRODUCE: a record count larger than the frame can hold', () => {
    refused(
      produce(str('t'), i32(0), i8(1), i32(2147483647), record(Buffer.from('x'))),
      CORRUPT,
      /recordCount: 2147483647, expected at most 1/,
    );
    refused(
      produce(str('t'), i32(0), i8(1), i32(2), record(Buffer.from('x')), Buffer.alloc(3)),
      CORRUPT,
      /records\[1\]\.size: runs past/,
    );
  });

  it('PRODUCE: zero-length and negative-length records', () => {
    refused(produce(str('t'), i32(0), i8(1), i32(1), i32(0)), CORRUPT, /records\[0\]\.size: 0, expected > 0/);
    refused(
      produce(str('t'), i32(0), i8(1), i32(2), record(Buffer.from('a')), i32(-1), Buffer.alloc(4)),
      CORRUPT,
      /records\[1\]\.size: -1/,
    );
  });

  it('PRODUCE: a record size running past the frame', () => {
    refused(
      produce(str('t'), i32(0), i8(1), i32(1), i32(100), Buffer.from('short')),
      CORRUPT,
      /records\[0\]\.size: 100, expected at most 5/,
    );
  });

  it('PRODUCE: fields cut off by the end of the frame', () => {
    refused(produce(str('t'), i32(0)), CORRUPT, /ackPolicy: needs 1 bytes, 0 left/);
    refused(produce(Buffer.from([0, 9, 0x61])), CORRUPT, /topic: needs 9 bytes/);
  });

  it('PRODUCE with ack NONE: every refusal is marked silent, so it is never answered', () => {
    refused(produce(str('t'), i32(0), i8(0), i32(0)), CORRUPT, /recordCount: 0/, true);
    refused(produce(str('bad name'), i32(0), i8(0), goodRecords), CORRUPT, /topic/, true);
    refused(produce(str('t'), i32(-1), i8(0), goodRecords), CORRUPT, /partition/, true);
  });

  it('FETCH: negative partition, negative offset, maxBytes 0', () => {
    refused(fetch2(str('t'), i32(-1), i64(0), i32(10), i32(0), i32(0)), CORRUPT, /partition: -1/);
    refused(fetch2(str('t'), i32(0), i64(-1), i32(10), i32(0), i32(0)), CORRUPT, /fetchOffset: -1/);
    refused(fetch2(str('t'), i32(0), i64(-(2n ** 63n)), i32(10), i32(0), i32(0)), CORRUPT, /fetchOffset: -/);
    refused(fetch2(str('t'), i32(0), i64(0), i32(0), i32(0), i32(0)), CORRUPT, /maxBytes: 0, expected > 0/);
  });

  it('FETCH v2: negative wait, negative minBytes, minBytes > maxBytes', () => {
    refused(fetch2(str('t'), i32(0), i64(0), i32(10), i32(-1), i32(0)), CORRUPT, /maxWaitMillis: -1/);
    refused(fetch2(str('t'), i32(0), i64(0), i32(10), i32(0), i32(-1)), CORRUPT, /minBytes: -1/);
    refused(
      fetch2(str('t'), i32(0), i64(0), i32(10), i32(0), i32(11)),
      CORRUPT,
      /minBytes: 11, expected <= maxBytes \(10\)/,
    );
  });

  it('FETCH v2: the wait fields missing from the frame', () => {
    refused(fetch2(str('t'), i32(0), i64(0), i32(10)), CORRUPT, /maxWaitMillis: needs 4 bytes/);
  });

  it('METADATA: negative topic count and a count beyond the frame', () => {
    refused(metadata(i32(-1)), CORRUPT, /topicCount: -1, expected >= 0/);
    refused(metadata(i32(1000), str('a')), CORRUPT, /topicCount: 1000, expected at most 1/);
  });

  it('METADATA: an invalid name in the list names its position', () => {
    refused(metadata(i32(2), str('ok'), str('')), CORRUPT, /topics\[1\]: "" is empty/);
  });

  it('bytes after the last field are ignored', () => {
    const req = decodeRequest(metadata(i32(0), Buffer.from('trailing bytes')));
    assert.deepEqual(req.body, { topics: [] });
    const p = decodeRequest(produce(str('t'), i32(0), i8(1), goodRecords, Buffer.from([1, 2, 3])));
    assert.equal(p.apiKey, 1);
  });
});
