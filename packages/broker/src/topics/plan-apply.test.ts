import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type TopicChange, type TopicSpec, topicSpecWithDefaults } from '@booblik/protocol';
import { isRefusal, planApply } from './plan-apply.js';

const spec = (over: Partial<TopicSpec> = {}): TopicSpec => ({
  ...topicSpecWithDefaults({ name: 'orders', partitions: 2, revision: 0 }),
  ...over,
});
const upsert = (s: TopicSpec): TopicChange => ({ op: 'upsert', spec: s });
const cluster = { cluster: true };

/** The refusal's message, or a failure naming what was planned instead. */
function refused(current: ReadonlyMap<string, TopicSpec>, change: TopicChange): string {
  const plan = planApply(current, [change], cluster);
  assert.ok(isRefusal(plan), `expected a refusal, planned ${JSON.stringify(plan)}`);
  return 'message' in plan ? plan.message : JSON.stringify(plan);
}

describe('APPLY in a cluster: replication and minInSync', () => {
  it('takes 1..5 copies, and 0 for the cluster default', () => {
    for (const replication of [0, 1, 3, 5]) {
      assert.ok(
        !isRefusal(planApply(new Map(), [upsert(spec({ replication }))], cluster)),
        `replication ${replication}`,
      );
    }
  });

  it('refuses more than 5 copies, naming the field and what is allowed', () => {
    assert.match(
      refused(new Map(), upsert(spec({ replication: 6 }))),
      /changes\[0\]\.replication: 6, expected 1\.\.5/,
    );
  });

  it("refuses a change of an existing topic's replication, which is set when it is created", () => {
    const current = new Map([['orders', spec({ replication: 3, revision: 7 })]]);
    assert.match(
      refused(current, upsert(spec({ replication: 2, revision: 7 }))),
      /replication: 2, expected 3 \(a topic's replication is set when it is created\)/,
    );
  });

  it('refuses a minInSync label outside 1..replication', () => {
    for (const value of ['0', '4', 'two']) {
      assert.match(
        refused(new Map(), upsert(spec({ replication: 3, labels: { minInSync: value } }))),
        /labels\.minInSync: .*, expected 1\.\.3/,
      );
    }
    assert.ok(
      !isRefusal(
        planApply(new Map(), [upsert(spec({ replication: 3, labels: { minInSync: '3' } }))], cluster),
      ),
    );
  });
});
