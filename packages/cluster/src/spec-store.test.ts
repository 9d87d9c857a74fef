import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Revision } from '@booblik/protocol';
import type { Etcd3 } from 'etcd3';
import { SpecChangeInvalidError, SpecRevisionMismatchError } from './errors.js';
import { connectEtcd } from './etcd-client.js';
import { EtcdSpecStore } from './spec-store.js';
import { type EtcdServer, startEtcd } from './test-support/etcd-server.js';
import { specOf, uniqueCluster } from './test-support/fixture.js';

describe('etcd spec store', () => {
  let etcd: EtcdServer;
  let client: Etcd3;
  before(async () => {
    etcd = await startEtcd();
    client = connectEtcd({ endpoints: [etcd.endpoint] });
  });
  after(async () => {
    client?.close();
    await etcd?.cleanup();
  });
  const newStore = () => new EtcdSpecStore(client, { cluster: uniqueCluster() });

  test('spec store: a created topic reads back with its change revision as its revision', async () => {
    const store = newStore();
    const revision = await store.apply([
      { op: 'upsert', spec: specOf('orders', Revision.MUST_NOT_EXIST, 3) },
    ]);
    const state = await store.load();
    assert.equal(state.revision, revision);
    assert.deepEqual(state.specs, [{ ...specOf('orders', revision, 3) }]);
    assert.deepEqual(state.unreadable, []);
  });

  test('spec store: a stale revision is refused, naming the topic and its actual revision', async () => {
    const store = newStore();
    const first = await store.apply([{ op: 'upsert', spec: specOf('orders', 0) }]);
    const second = await store.apply([{ op: 'upsert', spec: specOf('orders', first, 2) }]);
    await assert.rejects(store.apply([{ op: 'upsert', spec: specOf('orders', first, 4) }]), (error) => {
      assert.ok(error instanceof SpecRevisionMismatchError);
      assert.equal(error.topic, 'orders');
      assert.equal(error.expectedRevision, first);
      assert.equal(error.actualRevision, second);
      return true;
    });
    assert.equal((await store.load()).specs[0]?.partitions, 2);
  });

  test('spec store: of two appliers at the same revision exactly one wins', async () => {
    const store = newStore();
    const created = await store.apply([{ op: 'upsert', spec: specOf('orders', 0) }]);
    const otherClient = connectEtcd({ endpoints: [etcd.endpoint] });
    const other = new EtcdSpecStore(otherClient, { cluster: store.keyspace.cluster });
    const outcomes = await Promise.allSettled([
      store.apply([{ op: 'upsert', spec: specOf('orders', created, 2) }]),
      other.apply([{ op: 'upsert', spec: specOf('orders', created, 5) }]),
    ]);
    otherClient.close();
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(won.length, 1, JSON.stringify(outcomes));
    assert.ok(lost[0]?.reason instanceof SpecRevisionMismatchError);
    const winner = outcomes[0]!.status === 'fulfilled' ? 2 : 5;
    assert.equal((await store.load()).specs[0]?.partitions, winner);
  });

  test('spec store: "must not exist" (0) on an existing topic is refused', async () => {
    const store = newStore();
    const created = await store.apply([{ op: 'upsert', spec: specOf('orders', 0) }]);
    await assert.rejects(
      store.apply([{ op: 'upsert', spec: specOf('orders', Revision.MUST_NOT_EXIST, 9) }]),
      (error) => error instanceof SpecRevisionMismatchError && error.actualRevision === created,
    );
    assert.equal((await store.load()).specs[0]?.partitions, 1);
  });

  test('spec store: an APPLY with one stale change applies none of its changes', async () => {
    const store = newStore();
    const created = await store.apply([
      { op: 'upsert', spec: specOf('a', 0) },
      { op: 'upsert', spec: specOf('b', 0) },
    ]);
    await store.apply([{ op: 'upsert', spec: specOf('b', created, 2) }]);
    const before = await store.load();
    await assert.rejects(
      store.apply([
        { op: 'upsert', spec: specOf('new', 0) },
        { op: 'delete', name: 'a', expectedRevision: created },
        { op: 'upsert', spec: specOf('b', created, 3) },
      ]),
      (error) => error instanceof SpecRevisionMismatchError && error.index === 2 && error.topic === 'b',
    );
    const after = await store.load();
    assert.deepEqual(after.specs, before.specs);
    assert.equal(after.revision, before.revision);
  });

  test('spec store: any (-1) creates, replaces and deletes whatever the revision; a delete at N needs N', async () => {
    const store = newStore();
    await store.apply([{ op: 'upsert', spec: specOf('t', Revision.ANY) }]);
    const replaced = await store.apply([{ op: 'upsert', spec: specOf('t', Revision.ANY, 2) }]);
    await assert.rejects(
      store.apply([{ op: 'delete', name: 't', expectedRevision: replaced - 1 }]),
      SpecRevisionMismatchError,
    );
    await store.apply([{ op: 'delete', name: 't', expectedRevision: replaced }]);
    assert.deepEqual((await store.load()).specs, []);
    // Deleting what is not there at "any" is no change, not an error.
    await store.apply([{ op: 'delete', name: 't', expectedRevision: Revision.ANY }]);
  });

  test('spec store: bad changes are refused before etcd is asked', async () => {
    const store = new EtcdSpecStore(client, { cluster: uniqueCluster(), txnOpsMax: 2 });
    await assert.rejects(
      store.apply([
        { op: 'upsert', spec: specOf('t', 0) },
        { op: 'delete', name: 't', expectedRevision: -1 },
      ]),
      /changes\[1\]\.name: t is changed twice/,
    );
    await assert.rejects(
      store.apply([{ op: 'delete', name: 'bad/name', expectedRevision: -1 }]),
      SpecChangeInvalidError,
    );
    await assert.rejects(
      store.apply([1, 2, 3].map((i) => ({ op: 'upsert' as const, spec: specOf(`t${i}`, 0) }))),
      /changes: 3 \(3 operations: .*\), expected at most 2 operations in one APPLY \(the etcd server's --max-txn-ops\)/,
    );
    await assert.rejects(
      store.apply([
        { op: 'delete', name: 'a', expectedRevision: -1, purgeStore: true },
        { op: 'delete', name: 'b', expectedRevision: -1 },
      ]),
      /changes: 2 \(3 operations: a delete purging its store is two\), expected at most 2 operations/,
    );
    assert.deepEqual((await store.load()).specs, []);
  });

  test('spec store: a value it cannot read is reported as unreadable, not served', async () => {
    const store = newStore();
    await client.put(`${store.keyspace.specsPrefix}broken`).value('{"name":"broken","partitions":-4}');
    const state = await store.load();
    assert.deepEqual(state.specs, []);
    assert.equal(state.unreadable.length, 1);
    assert.match(state.unreadable[0]!.problem, /^labels: undefined, expected an object$/);
  });
});
