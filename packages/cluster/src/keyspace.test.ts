import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Keyspace } from './keyspace.js';
import { specOf } from './test-support/fixture.js';
import { decodeAssignment, decodeMember, decodeSpec, encodeSpec } from './values.js';

test('keyspace: a user name of any characters is one key, parsed back to it; a key spelled another way is not ours', () => {
  const ks = new Keyspace('prod');
  for (const name of ['alice', 'a/b', 'ünïcødé user', '../x']) {
    const key = ks.userKey(name);
    assert.ok(key.startsWith('/prod/users/') && !key.slice('/prod/users/'.length).includes('/'), key);
    assert.deepEqual(ks.parse(key), { kind: 'user', name });
  }
  assert.equal(ks.parse('/prod/users/YWxpY2U='), null, 'padding is not the one spelling');
  assert.equal(ks.parse('/prod/users/a/b'), null);
});

test('keyspace: the documented layout, and every key parses back to what built it', () => {
  const ks = new Keyspace('prod');
  assert.equal(ks.memberKey('b1'), '/prod/members/b1');
  assert.equal(ks.specKey('orders'), '/prod/specs/orders');
  assert.equal(ks.assignmentKey('orders', 7, 'b1'), '/prod/assignments/orders/7/b1');
  assert.deepEqual(ks.parse('/prod/members/b1'), { kind: 'member', member: 'b1' });
  assert.deepEqual(ks.parse('/prod/specs/zamówienia'), { kind: 'spec', topic: 'zamówienia' });
  assert.deepEqual(ks.parse('/prod/assignments/orders/7/b1'), {
    kind: 'assignment',
    topic: 'orders',
    partition: 7,
    member: 'b1',
  });
});

test('keyspace: keys of another cluster, another version or a bad shape are not read as ours', () => {
  const ks = new Keyspace('prod');
  for (const key of [
    '/prod2/members/b1',
    '/prod/leader',
    '/prod/members/',
    '/prod/members/a/b',
    '/prod/specs/bad/name',
    '/prod/assignments/orders/07/b1',
    '/prod/assignments/orders/-1/b1',
    '/prod/assignments/orders/10000/b1',
    '/prod/assignments/orders/7',
  ]) {
    assert.equal(ks.parse(key), null, key);
  }
});

test('keyspace: a name that would not be one path segment is refused, naming the field', () => {
  assert.throws(() => new Keyspace('a/b'), /cluster name: "a\/b", expected a letter or digit first/);
  assert.throws(() => new Keyspace(''), /cluster name: "" has 0 characters, expected 1\.\.64/);
  const ks = new Keyspace('prod');
  assert.throws(() => ks.memberKey('x'.repeat(65)), /member id: .* has 65 characters/);
  assert.throws(() => ks.specKey('a/b'), /topic: "a\/b" has a character other than/);
  assert.throws(() => ks.assignmentKey('orders', -1, 'b1'), /partition: -1, expected 0\.\.9999/);
});

test('values: a spec is stored without its revision and read back with the key mod revision', () => {
  const spec = specOf('orders', 0, 3);
  const stored = encodeSpec(spec);
  assert.equal(JSON.parse(stored).revision, undefined);
  assert.deepEqual(decodeSpec(Buffer.from(stored), 42), { value: { ...spec, revision: 42 } });
});

test('values: each unreadable value names what is wrong, and nothing throws', () => {
  const problem = (decoded: { value: unknown } | { problem: string }): string =>
    'problem' in decoded ? decoded.problem : 'read';
  assert.match(problem(decodeSpec(Buffer.from('{'), 1)), /^not JSON/);
  assert.match(problem(decodeSpec(Buffer.from('[1]'), 1)), /expected a JSON object$/);
  const spec = JSON.parse(encodeSpec(specOf('orders', 0)));
  assert.match(
    problem(decodeSpec(Buffer.from(JSON.stringify({ ...spec, partitions: 0 })), 1)),
    /^partitions: 0/,
  );
  assert.match(
    problem(decodeSpec(Buffer.from(JSON.stringify({ ...spec, name: 7 })), 1)),
    /^name: 7, expected a string/,
  );
  assert.match(
    problem(decodeMember(Buffer.from('{"id":"b1","zone":"a","address":"no-port"}'))),
    /^address: "no-port", expected host:port/,
  );
  assert.match(
    problem(decodeMember(Buffer.from('{"id":"b1","zone":"a","address":"h:70000"}'))),
    /a port 1\.\.65535/,
  );
  assert.match(problem(decodeAssignment(Buffer.from('{"slot":-1}'))), /^slot: -1, expected 0\.\.32767/);
  assert.deepEqual(decodeAssignment(Buffer.from('{"slot":0}')), { value: { slot: 0 } });
});
