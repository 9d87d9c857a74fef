import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatRecord } from './format.js';

const record = (payload: Buffer) => ({ topic: 't', partition: 1, offset: 7, payload });

describe('record formats', () => {
  it('text keeps the bytes as they are; hex is lowercase', () => {
    assert.deepEqual(
      formatRecord(record(Buffer.from([0xff, 0x41])), 'text'),
      Buffer.from([0xff, 0x41, 0x0a]),
    );
    assert.equal(formatRecord(record(Buffer.from([0xab, 0x00])), 'hex'), 'ab00\n');
  });

  it('json never mangles bytes: UTF-8 as a string, anything else as base64', () => {
    assert.equal(
      formatRecord(record(Buffer.from('héllo "x"')), 'json'),
      '{"topic":"t","partition":1,"offset":7,"payload":"héllo \\"x\\""}\n',
    );
    assert.equal(
      formatRecord(record(Buffer.from([0xff, 0xfe])), 'json'),
      '{"topic":"t","partition":1,"offset":7,"payloadBase64":"//4="}\n',
    );
  });
});
