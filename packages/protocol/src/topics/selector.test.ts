import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSelector, SelectorError, selectorMatches } from './selector.js';

const topics: [string, Record<string, string>][] = [
  ['orders', { team: 'payments', env: 'prod' }],
  ['refunds', { team: 'payments', env: 'dev' }],
  ['clicks', { team: 'web' }],
  ['logs', {}],
];

const select = (selector: string) =>
  topics.filter(([name, labels]) => selectorMatches(parseSelector(selector), name, labels)).map(([n]) => n);

describe('label selectors (Gazette grammar)', () => {
  it('each requirement form selects what it says', () => {
    assert.deepEqual(select(''), ['orders', 'refunds', 'clicks', 'logs']);
    assert.deepEqual(select('team=payments'), ['orders', 'refunds']);
    assert.deepEqual(select('team!=payments'), ['clicks', 'logs'], '!= also matches topics without the key');
    assert.deepEqual(select('env'), ['orders', 'refunds']);
    assert.deepEqual(select('!env'), ['clicks', 'logs']);
    assert.deepEqual(select('team in (web,payments)'), ['orders', 'refunds', 'clicks']);
    assert.deepEqual(select('env notin (prod)'), ['refunds', 'clicks', 'logs']);
  });

  it('a comma is "and"; spaces around tokens do not matter', () => {
    assert.deepEqual(select('team=payments,env=prod'), ['orders']);
    assert.deepEqual(select('  team = payments ,  env notin ( prod , x )  '), ['refunds']);
    assert.deepEqual(select('team=payments,!env'), []);
  });

  it('the name key selects by topic name, in any script', () => {
    assert.deepEqual(select('name=clicks'), ['clicks']);
    assert.deepEqual(select('name in (logs,orders)'), ['orders', 'logs']);
    assert.ok(selectorMatches(parseSelector('name=заказы'), 'заказы', {}));
  });

  it('a label named like an Object property is just a label', () => {
    assert.ok(!selectorMatches(parseSelector('constructor'), 't', {}));
    assert.ok(selectorMatches(parseSelector('toString=x'), 't', { toString: 'x' }));
  });

  it('a selector that does not parse says where', () => {
    for (const [bad, where] of [
      ['team=', null],
      ['=x', /at 0: label key ""/],
      ['a,', /at 2: label key ""/],
      ['a in (x', /expected "," or "\)"/],
      ['a in x', /expected "\("/],
      ['a b', /expected "," between requirements/],
      ['a=b c', /expected "," between requirements/],
      ['a=(b)', /at 2: expected "," between requirements/],
    ] as const) {
      if (where === null) {
        assert.doesNotThrow(() => parseSelector(bad), `${bad}: an empty value is a value`);
        continue;
      }
      assert.throws(
        () => parseSelector(bad),
        (e: unknown) => e instanceof SelectorError && where.test(e.message),
        bad,
      );
    }
    assert.throws(() => parseSelector('a'.repeat(5000)), /5000 characters, expected at most 4096/);
  });
});
