import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type TopicSpec, topicSpecProblem, topicSpecWithDefaults } from './spec.js';

const good: TopicSpec = {
  name: 'orders',
  partitions: 3,
  labels: { team: 'payments', 'app.kubernetes.io/part-of': 'shop' },
  retentionBytes: 1024,
  retentionMs: 60_000,
  segmentBytes: 4096,
  flags: 1,
  replication: 1,
  storeUrl: '',
  revision: 4,
};

describe('topic spec validation: one field broken at a time, the message names it', () => {
  it('a good spec and the all-defaults spec pass', () => {
    assert.equal(topicSpecProblem(good), null);
    assert.equal(topicSpecProblem(topicSpecWithDefaults({ name: 'x', partitions: 1 })), null);
    assert.equal(topicSpecProblem({ ...good, storeUrl: 's3://bucket/prefix' }), null);
    assert.equal(topicSpecProblem({ ...good, labels: { empty: '' } }), null);
  });

  const broken: [Partial<TopicSpec>, RegExp][] = [
    [{ name: '' }, /^name: "" is empty/],
    [{ name: 'a b' }, /^name: "a b" has a character/],
    [{ name: 'x'.repeat(250) }, /^name: .* 250 characters/],
    [{ partitions: 0 }, /^partitions: 0, expected 1\.\.10000/],
    [{ partitions: 10_001 }, /^partitions: 10001, expected 1\.\.10000/],
    [{ partitions: 1.5 }, /^partitions: 1\.5/],
    [{ labels: { '': 'x' } }, /^labels: key "" is empty/],
    [{ labels: { '-a': 'x' } }, /^labels: key "-a" expected a letter or digit first/],
    [{ labels: { 'a=b': 'x' } }, /^labels: key "a=b"/],
    [{ labels: { ['k'.repeat(64)]: 'x' } }, /has 64 characters, expected at most 63/],
    [{ labels: { name: 'x' } }, /^labels: key "name" is reserved/],
    [{ labels: { 'booblik.owner': 'x' } }, /^labels: key "booblik.owner" is reserved/],
    [{ labels: { team: 'a b' } }, /^labels.team: "a b" expected letters/],
    [{ labels: { team: 'a,b' } }, /^labels.team: "a,b"/],
    [{ labels: { team: 'v'.repeat(254) } }, /^labels.team: .* 254 characters, expected at most 253/],
    [
      { labels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) },
      /^labels: 65 of them, expected at most 64/,
    ],
    [{ retentionBytes: -3 }, /^retentionBytes: -3, expected an integer >= -2/],
    [{ retentionMs: -3 }, /^retentionMillis: -3/],
    [{ segmentBytes: 8 }, /^segmentBytes: 8, expected 9\.\.2147483647/],
    [{ segmentBytes: 2 ** 31 }, /^segmentBytes: 2147483648/],
    [{ flags: 2 }, /^flags: 2, expected a combination of 1 \(read-only\)/],
    [{ replication: -1 }, /^replication: -1, expected 1\.\.32767/],
    [{ storeUrl: 'http://x' }, /^storeUrl: "http:\/\/x", expected empty, file:\/\/\.\.\. or s3:\/\//],
    [{ storeUrl: `s3://${'b'.repeat(2048)}` }, /^storeUrl: 2053 characters/],
    [{ revision: -2 }, /^revision: -2, expected -1 \(any\), 0 \(must not exist\)/],
  ];
  for (const [patch, message] of broken) {
    const field = Object.keys(patch)[0]!;
    it(`${field}: ${message.source.slice(0, 60)}`, () => {
      const problem = topicSpecProblem({ ...good, ...patch });
      assert.ok(problem !== null, `${JSON.stringify(patch).slice(0, 80)} was accepted`);
      assert.match(problem, message);
    });
  }

  it('a stored spec (no defaults allowed) refuses the APPLY sentinels', () => {
    const rules = { defaultsAllowed: false };
    assert.match(
      topicSpecProblem({ ...good, retentionBytes: -2 }, rules)!,
      /^retentionBytes: -2, expected an integer >= -1/,
    );
    assert.match(topicSpecProblem({ ...good, segmentBytes: 0 }, rules)!, /^segmentBytes: 0/);
    assert.match(topicSpecProblem({ ...good, replication: 0 }, rules)!, /^replication: 0/);
    assert.equal(topicSpecProblem(good, rules), null);
  });
});
