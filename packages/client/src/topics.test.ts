import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ApiKey,
  ErrorCode,
  encodeApplyResponse,
  encodeErrorResponse,
  partitionForKey,
} from '@booblik/protocol';
import { BrokerProcess } from '@booblik/testkit';
import { Connection } from './connection.js';
import { BrokerError, InvalidArgumentError } from './errors.js';
import { FakeBroker } from './test-support/fake-broker.js';
import { InvalidArgumentRefusal, OffsetMismatchError, RevisionMismatchError } from './topic-errors.js';

async function connected(t: import('node:test').TestContext, args: string[] = []) {
  const connection = await Connection.connect(
    (await BrokerProcess.start(t, { http: false, flags: args })).address,
  );
  t.after(() => connection.close());
  return connection;
}

describe('topics from the TypeScript client', () => {
  it('applyTopics creates and changes; listTopics selects by label; refusals carry their details', async (t) => {
    const c = await connected(t, ['--topics=default:1']);
    const created = await c.applyTopics([
      { op: 'upsert', spec: { name: 'orders', partitions: 3, labels: { team: 'payments' }, revision: 0 } },
      { op: 'upsert', spec: { name: 'clicks', partitions: 1, labels: { team: 'web' } } },
    ]);
    const listed = await c.listTopics('team=payments');
    assert.equal(listed.revision, created.revision);
    assert.deepEqual(
      listed.topics.map((x) => [x.spec.name, x.spec.partitions, x.spec.labels, x.spec.revision]),
      [['orders', 3, { team: 'payments' }, created.revision]],
    );

    const stale = c.applyTopics([
      { op: 'upsert', spec: { name: 'orders', partitions: 4, revision: created.revision - 1 } },
    ]);
    await assert.rejects(stale, (e: unknown) => {
      assert.ok(e instanceof RevisionMismatchError, String(e));
      assert.equal(e.code, ErrorCode.REVISION_MISMATCH);
      assert.deepEqual(
        [e.topic, e.expectedRevision, e.actualRevision],
        ['orders', created.revision - 1, created.revision],
      );
      return true;
    });
    await assert.rejects(
      c.applyTopics([{ op: 'upsert', spec: { name: 'orders', partitions: 2 } }]),
      (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentRefusal, String(e));
        assert.match(e.detail, /partitions: 2, expected >= 3/);
        return true;
      },
    );
    // A bad field is refused before anything is sent.
    await assert.rejects(
      c.applyTopics([{ op: 'upsert', spec: { name: 'x', partitions: 1, labels: { name: 'reserved' } } }]),
      (e: unknown) => e instanceof InvalidArgumentError && /labels: key "name" is reserved/.test(e.message),
    );
    await c.applyTopics([{ op: 'delete', name: 'clicks' }]);
    assert.deepEqual(
      (await c.listTopics()).topics.map((x) => x.spec.name),
      ['default', 'orders'],
    );
  });

  it('watchTopics yields the listing, then each change, and ends quietly when aborted', async (t) => {
    const c = await connected(t);
    const abort = new AbortController();
    const seen: string[][] = [];
    const watching = (async () => {
      for await (const listing of c.watchTopics('team=a', { signal: abort.signal })) {
        seen.push(listing.topics.map((x) => x.spec.name));
        if (seen.length === 1) {
          // The watch holds its own connection: this one answers at once.
          await c.applyTopics([{ op: 'upsert', spec: { name: 'w1', partitions: 1, labels: { team: 'a' } } }]);
        } else if (seen.length === 2) {
          abort.abort();
        }
      }
    })();
    await watching;
    assert.deepEqual(seen, [[], ['w1']]);
  });

  it('a Topic routes to partitions added while it sends', async (t) => {
    const c = await connected(t, ['--topics=grow:1']);
    const topic = await c.topic('grow', { metadataMaxAgeMs: 0 });
    assert.deepEqual(topic.partitions, [0]);
    const key = (i: number) => `key-${i}`;
    let i = 0;
    for (; i < 20; i++) assert.equal((await topic.send('x', { key: key(i) })).partition, 0);
    await c.applyTopics([{ op: 'upsert', spec: { name: 'grow', partitions: 4 } }]);
    const landed = new Set<number>();
    for (; i < 60; i++) {
      const sent = await topic.send('x', { key: key(i) });
      assert.equal(
        sent.partition,
        partitionForKey(Buffer.from(key(i)), 4),
        `record ${i} routed with the new count`,
      );
      landed.add(sent.partition);
    }
    assert.deepEqual(topic.partitions, [0, 1, 2, 3]);
    assert.ok(landed.size > 1, 'records reached the new partitions');
  });

  it('a Topic reads its partitions again only once its list is older than the max age', async (t) => {
    const c = await connected(t, ['--topics=aged:1']);
    const topic = await c.topic('aged', { metadataMaxAgeMs: 60_000 });
    await c.applyTopics([{ op: 'upsert', spec: { name: 'aged', partitions: 2 } }]);
    await topic.send('x');
    assert.deepEqual(topic.partitions, [0], 'not stale yet: no METADATA');
    await topic.refresh();
    assert.deepEqual(topic.partitions, [0, 1]);
  });

  it('produce with an expected offset: lands there, or OffsetMismatchError with the actual end', async (t) => {
    const c = await connected(t, ['--topics=p:1']);
    assert.equal((await c.produce('p', 0, [Buffer.from('a')], { expectedOffset: 0 }))?.baseOffset, 0);
    await assert.rejects(c.produce('p', 0, [Buffer.from('b')], { expectedOffset: 0 }), (e: unknown) => {
      assert.ok(e instanceof OffsetMismatchError, String(e));
      assert.deepEqual([e.expectedOffset, e.logEndOffset], [0, 1]);
      return true;
    });
  });

  it('a delete purging the store goes as APPLY v2, any other APPLY keeps v1; a broker without v2 refuses it whole', async (t) => {
    // This fake speaks APPLY v1 only, as a broker from before v2 does.
    const broker = await FakeBroker.start(({ request }) =>
      request.apiVersion === 1
        ? encodeApplyResponse(request.correlationId, 5)
        : encodeErrorResponse(request.correlationId, ErrorCode.UNSUPPORTED_VERSION),
    );
    t.after(() => broker.close());
    const c = await Connection.connect(broker.address);
    t.after(() => c.close());
    assert.deepEqual(await c.applyTopics([{ op: 'delete', name: 'a' }]), { revision: 5 });
    await assert.rejects(
      c.applyTopics([{ op: 'delete', name: 'a', purgeStore: true }]),
      (e: unknown) => e instanceof BrokerError && e.code === ErrorCode.UNSUPPORTED_VERSION,
    );
    assert.deepEqual(
      broker.received.map((r) => [r.apiKey, r.apiVersion, r.body]),
      [
        [ApiKey.APPLY, 1, { dryRun: false, changes: [{ op: 'delete', name: 'a', expectedRevision: -1 }] }],
        [
          ApiKey.APPLY,
          2,
          { dryRun: false, changes: [{ op: 'delete', name: 'a', expectedRevision: -1, purgeStore: true }] },
        ],
      ],
    );
  });

  it('apiVersions lists the topic APIs; METADATA v2 carries the routes', async (t) => {
    const c = await connected(t, ['--topics=r:2']);
    const versions = await c.apiVersions();
    assert.ok(versions.some((v) => v.apiKey === ApiKey.APPLY && v.maxVersion >= 1));
    const meta = await c.metadataWithRoutes('r');
    assert.equal(meta.topics[0]!.partitions.length, 2);
    assert.equal(meta.topics[0]!.partitions[0]!.route.primary, c.address);
  });
});
