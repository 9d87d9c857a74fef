import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidTopicName, topicNameProblem } from './topic-name.js';

describe('topic names', () => {
  it('accepts letters of any script, digits, dot, underscore and dash', () => {
    for (const name of ['orders', 'a', 'Orders.v2_eu-west', 'заказы', '注文', '٣٤', 'x'.repeat(249)]) {
      assert.equal(topicNameProblem(name), null, name);
    }
  });

  it('refuses the empty name and 250 characters, counting characters not bytes', () => {
    assert.match(topicNameProblem('')!, /empty/);
    assert.match(topicNameProblem('x'.repeat(250))!, /250 characters/);
    assert.ok(isValidTopicName('я'.repeat(249)), '249 two-byte characters are 249 characters');
  });

  it('refuses spaces, slashes, emoji and control characters', () => {
    for (const name of ['a b', 'a/b', 'a\u0000b', 'order🚀', 'a:b', 'a*']) {
      assert.match(topicNameProblem(name)!, /character other than/, JSON.stringify(name));
    }
  });

  it('names the first character not allowed and where it is, so the user knows what to remove', () => {
    assert.match(topicNameProblem('orders/eu')!, /: "\/" at character 7$/);
    assert.match(topicNameProblem('заказы 2')!, /: " " at character 7$/);
    assert.match(topicNameProblem('a\u0000b')!, /: "\\u0000" at character 2$/);
    assert.match(topicNameProblem('🚀x')!, /: "🚀" at character 1$/);
  });
});
