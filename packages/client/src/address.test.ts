import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAddress, parseAddress } from './address.js';
import { InvalidArgumentError } from './errors.js';

describe('address', () => {
  it('reads host:port, [ipv6]:port, and a bare host as port 9092', () => {
    assert.deepEqual(parseAddress('broker.local:19092'), { host: 'broker.local', port: 19092 });
    assert.deepEqual(parseAddress('[::1]:9093'), { host: '::1', port: 9093 });
    assert.deepEqual(parseAddress('10.0.0.1'), { host: '10.0.0.1', port: 9092 });
    assert.equal(formatAddress(parseAddress('[::1]:9093')), '[::1]:9093');
  });

  it('a bad port or an unbracketed IPv6 host is refused, saying what was given', () => {
    for (const bad of ['h:0', 'h:65536', 'h:', 'h:12x', ':9092', '::1:9092', '']) {
      assert.throws(() => parseAddress(bad), InvalidArgumentError, bad);
    }
    assert.throws(() => parseAddress('h:70000'), /"h:70000", port expected 1..65535/);
  });
});
