import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSpecFile, SpecFileError } from './spec-file.js';

describe('topic files', () => {
  it('one spec as it is: name, partitions, labels; no revision means any', () => {
    const [one, ...rest] = parseSpecFile('name: orders\npartitions: 3\nlabels: {team: payments}\n', 'f.yaml');
    assert.equal(rest.length, 0);
    assert.deepEqual(one!.change, {
      op: 'upsert',
      spec: { name: 'orders', partitions: 3, labels: { team: 'payments' }, revision: -1 },
    });
    assert.equal(one!.revision, undefined);
  });

  it('store: is the short name of storeUrl; giving both is refused', () => {
    const [one] = parseSpecFile('name: orders\npartitions: 1\nstore: file:///srv/booblik\n', 'f.yaml');
    assert.deepEqual(one!.change, {
      op: 'upsert',
      spec: { name: 'orders', partitions: 1, storeUrl: 'file:///srv/booblik', revision: -1 },
    });
    assert.throws(
      () => parseSpecFile('name: o\npartitions: 1\nstore: file:///a\nstoreUrl: file:///b\n', 'f.yaml'),
      (e: unknown) => e instanceof SpecFileError && /store and storeUrl: give one of them/.test(e.message),
    );
  });

  it('children inherit every field of their parents, labels merged, the nearest value winning', () => {
    const text = `
labels: {team: payments, env: prod}
partitions: 3
retentionMs: 60000
children:
  - labels: {env: dev}
    children:
      - name: a
        revision: 7
      - name: b
        partitions: 6
        readOnly: true
  - name: c
  - name: gone
    delete: true
`;
    const changes = parseSpecFile(text, 'f.yaml').map((c) => c.change);
    assert.deepEqual(changes, [
      {
        op: 'upsert',
        spec: {
          name: 'a',
          partitions: 3,
          retentionMs: 60000,
          labels: { team: 'payments', env: 'dev' },
          revision: 7,
        },
      },
      {
        op: 'upsert',
        spec: {
          name: 'b',
          partitions: 6,
          retentionMs: 60000,
          readOnly: true,
          labels: { team: 'payments', env: 'dev' },
          revision: -1,
        },
      },
      {
        op: 'upsert',
        spec: {
          name: 'c',
          partitions: 3,
          retentionMs: 60000,
          labels: { team: 'payments', env: 'prod' },
          revision: -1,
        },
      },
      { op: 'delete', name: 'gone', expectedRevision: -1 },
    ]);
  });

  it('a mistake names the file, the node and the field', () => {
    for (const [text, message] of [
      ['name: a\npartitions: 1\npartition: 2\n', /f.yaml: the top level: unknown field "partition"/],
      ['children:\n  - name: a\n', /children\[0\]: partitions: not set for topic a/],
      [
        'children:\n  - name: a\n    partitions: three\n',
        /children\[0\]: partitions: "three", expected an integer/,
      ],
      ['revision: 3\nchildren:\n  - name: a\n    partitions: 1\n', /the top level: revision: only a leaf/],
      [
        'children:\n  - name: a\n    partitions: 1\n  - name: a\n    partitions: 2\n',
        /topic a appears twice/,
      ],
      ['name: a\npartitions: 1\nrevision: -5\n', /revision: -5, expected -1/],
      ['name: a\nname: b\n', /f.yaml: .*(unique|Map keys must be unique)/i],
      ['', /empty, expected a topic spec/],
      ['- a\n', /expected a mapping/],
      ['name: a\npartitions: 1\nlabels: [x]\n', /labels: expected a mapping/],
    ] as const) {
      assert.throws(
        () => parseSpecFile(text, 'f.yaml'),
        (e: unknown) => e instanceof SpecFileError && message.test(e.message),
        text,
      );
    }
  });
});
