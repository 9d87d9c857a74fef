import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type TopicSpec, toWireSpec } from '@booblik/client';
import { planChanges } from './describe.js';
import { parseSpecFile } from './spec-file.js';

/** A spec as the broker lists one made from `fields` (its unset fields at the wire's default sentinels). */
function stored(fields: Parameters<typeof toWireSpec>[0], revision = 4): TopicSpec {
  return { ...toWireSpec(fields), revision };
}

const plan = (file: string, current: TopicSpec[] = []) =>
  planChanges(parseSpecFile(file, 'f.yaml'), new Map(current.map((s) => [s.name, s]))).map((p) => p.line);

describe('topics apply: the planned changes', () => {
  it('an update shows every field that changes, with user-facing values, never the wire sentinels', () => {
    const lines = plan(
      'name: t\npartitions: 3\nretentionMs: -1\nretentionBytes: 1000\nsegmentBytes: 100000\nreplication: 3\nreadOnly: true\nstore: file:///srv/b\n',
      [stored({ name: 't', partitions: 3 })],
    );
    assert.deepEqual(lines, [
      'update t (revision 4): retentionBytes default -> 1000, retentionMs default -> unlimited, ' +
        'segmentBytes default -> 100000, readOnly false -> true, replication default -> 3, ' +
        'store none -> file:///srv/b',
    ]);
    assert.doesNotMatch(lines[0]!, /-2|""| 0 /);
  });

  it('a field left out of the file goes back to the broker default, and says so', () => {
    const lines = plan('name: t\npartitions: 3\n', [
      stored({ name: 't', partitions: 3, retentionMs: 60000, segmentBytes: 4096 }),
    ]);
    assert.deepEqual(lines, [
      'update t (revision 4): retentionMs 60000 -> default, segmentBytes 4096 -> default',
    ]);
  });

  it('a create lists every field it sets beyond the defaults', () => {
    assert.deepEqual(
      plan(
        'name: n\npartitions: 2\nlabels: {team: web}\nsegmentBytes: 100000\nreplication: 2\nstore: s3://b/p\n',
      ),
      ['create n: 2 partition(s), labels team=web, segmentBytes 100000, replication 2, store s3://b/p'],
    );
    assert.deepEqual(plan('name: n\npartitions: 2\n'), ['create n: 2 partition(s), labels -']);
  });

  it('the same spec again is unchanged', () => {
    assert.deepEqual(
      plan('name: t\npartitions: 3\nreplication: 3\n', [
        stored({ name: 't', partitions: 3, replication: 3 }),
      ]),
      ['unchanged t (revision 4)'],
    );
  });
});
