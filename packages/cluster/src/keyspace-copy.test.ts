import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FaultProxy, startFaultProxy } from '@booblik/testkit';
import type { Etcd3 } from 'etcd3';
import { ClusterUnavailableError, RevisionWaitTimeoutError } from './errors.js';
import { connectEtcd } from './etcd-client.js';
import { Keyspace } from './keyspace.js';
import { KeyspaceCopy } from './keyspace-copy.js';
import { Member } from './member.js';
import { EtcdSpecStore } from './spec-store.js';
import { type EtcdServer, startEtcd } from './test-support/etcd-server.js';
import { specOf, uniqueCluster, untilCopy, untilEvent } from './test-support/fixture.js';
import { encodeAssignment } from './values.js';

/** How long a write may take to fail once etcd is gone: the client's deadline and a margin. */
const REQUEST_TIMEOUT_MS = 1000;

describe('keyspace copy', () => {
  let etcd: EtcdServer;
  const clients: Etcd3[] = [];
  const newClient = (endpoint = etcd.endpoint) => {
    const client = connectEtcd({ endpoints: [endpoint], requestTimeoutMs: REQUEST_TIMEOUT_MS });
    clients.push(client);
    return client;
  };
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    for (const client of clients) client.close();
    await etcd?.cleanup();
  });

  test('copy: waitForRevision resolves once the copy reaches an APPLY made through another client', async (t) => {
    const cluster = uniqueCluster();
    const copy = await KeyspaceCopy.start(newClient(), { cluster });
    t.after(() => copy.close());
    const store = new EtcdSpecStore(newClient(), { cluster });
    let reached = false;
    const waiting = copy.waitForRevision(copy.revision + 1).then(() => {
      reached = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(reached, false, 'resolved before anything changed');
    const revision = await store.apply([{ op: 'upsert', spec: specOf('orders', 0, 3) }]);
    await copy.waitForRevision(revision, 5000);
    // The moment the wait resolves, the topic is in the copy: a request can use it at once.
    assert.equal(copy.specs.get('orders')?.partitions, 3);
    assert.equal(copy.specs.get('orders')?.revision, revision);
    await waiting;
    await copy.waitForRevision(revision - 1, 1);
  });

  test('copy: a deletion purging the store is told apart from a plain one, and from an earlier purge of the name', async (t) => {
    const cluster = uniqueCluster();
    const copy = await KeyspaceCopy.start(newClient(), { cluster });
    t.after(() => copy.close());
    const store = new EtcdSpecStore(newClient(), { cluster });
    await store.apply([{ op: 'upsert', spec: specOf('orders', 0, 1) }]);
    await copy.waitForRevision(
      await store.apply([{ op: 'delete', name: 'orders', expectedRevision: -1, purgeStore: true }]),
      5000,
    );
    assert.equal(copy.specs.has('orders'), false);
    assert.equal(copy.purgeRequested('orders'), true, 'deleted purging its store');

    // Created again, then deleted plainly: the marker of the first deletion is not this one's.
    await copy.waitForRevision(await store.apply([{ op: 'upsert', spec: specOf('orders', 0, 1) }]), 5000);
    assert.equal(copy.purgeRequested('orders'), false, 'a topic that exists is not purged');
    await copy.waitForRevision(
      await store.apply([{ op: 'delete', name: 'orders', expectedRevision: -1 }]),
      5000,
    );
    assert.equal(copy.purgeRequested('orders'), false, 'a plain delete keeps the store');

    // A copy that only reads the keyspace whole did not see the deletion: it never guesses a purge.
    await store.apply([{ op: 'upsert', spec: specOf('orders', 0, 1) }]);
    await store.apply([{ op: 'delete', name: 'orders', expectedRevision: -1, purgeStore: true }]);
    const late = await KeyspaceCopy.start(newClient(), { cluster });
    t.after(() => late.close());
    assert.equal(late.purgeRequested('orders'), false);
  });

  test('copy: a revision never reached fails the wait with a retriable timeout', async (t) => {
    const copy = await KeyspaceCopy.start(newClient(), { cluster: uniqueCluster() });
    t.after(() => copy.close());
    await assert.rejects(copy.waitForRevision(copy.revision + 1_000_000, 200), (error) => {
      assert.ok(error instanceof RevisionWaitTimeoutError);
      assert.equal(error.retriable, true);
      assert.match(error.message, /not reached within 200 ms \(the copy is at \d+\)/);
      return true;
    });
  });

  test('copy: assignments follow their keys, and die with the lease they were written under', async (t) => {
    const cluster = uniqueCluster();
    const keyspace = new Keyspace(cluster);
    const client = newClient();
    const copy = await KeyspaceCopy.start(newClient(), { cluster });
    t.after(() => copy.close());
    const lease = client.lease(2);
    await lease.grant();
    await lease.put(keyspace.assignmentKey('orders', 7, 'b1')).value(encodeAssignment({ slot: 0 }));
    await untilCopy(copy, 'the assignment', () => copy.assignmentsOf('orders', 7).length === 1, 5000);
    assert.deepEqual(
      copy.assignmentsOf('orders', 7).map(({ member, slot }) => ({ member, slot })),
      [{ member: 'b1', slot: 0 }],
    );
    await lease.revoke();
    await untilCopy(copy, 'the assignment gone', () => [...copy.assignments()].length === 0, 5000);
  });

  test('copy: a value it cannot read is reported and left out, and replaces what the key held', async (t) => {
    const cluster = uniqueCluster();
    const problems: string[] = [];
    const copy = await KeyspaceCopy.start(newClient(), {
      cluster,
      onProblem: (key, problem) => problems.push(`${key}: ${problem}`),
    });
    t.after(() => copy.close());
    const store = new EtcdSpecStore(newClient(), { cluster });
    const revision = await store.apply([{ op: 'upsert', spec: specOf('orders', 0) }]);
    await copy.waitForRevision(revision, 5000);
    const client = newClient();
    const written = await client.put(`/${cluster}/specs/orders`).value('not json').exec();
    await copy.waitForRevision(Number(written.header.revision), 5000);
    assert.equal(copy.specs.has('orders'), false, 'a stale spec kept serving');
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, new RegExp(`^/${cluster}/specs/orders: not JSON`));
  });

  describe('through a link that is cut', () => {
    let proxy: FaultProxy;
    before(async () => {
      proxy = await startFaultProxy({ target: `127.0.0.1:${etcd.clientPort}` });
    });
    after(() => proxy?.close());

    for (const compacted of [false, true]) {
      test(`copy: cut off from etcd it keeps its copy, and once back sees every change made meanwhile${compacted ? ' (history compacted: read whole again)' : ''}`, async (t) => {
        const cluster = uniqueCluster();
        const copy = await KeyspaceCopy.start(newClient(`http://${proxy.address}`), { cluster });
        t.after(() => copy.close());
        const direct = newClient();
        const store = new EtcdSpecStore(direct, { cluster });
        const created = await store.apply([
          { op: 'upsert', spec: specOf('kept', 0) },
          { op: 'upsert', spec: specOf('deleted', 0) },
        ]);
        await copy.waitForRevision(created, 5000);
        assert.equal(copy.connected, true);

        const disconnected = untilEvent(copy, 'connection', 5000, (up) => up === false);
        proxy.cut();
        await disconnected;
        const changed = await store.apply([
          { op: 'upsert', spec: specOf('kept', created, 4) },
          { op: 'delete', name: 'deleted', expectedRevision: created },
          { op: 'upsert', spec: specOf('added', 0) },
        ]);
        // Cut off, it still answers with what it had.
        assert.deepEqual([...copy.specs.keys()].sort(), ['deleted', 'kept']);
        assert.equal(copy.revision, created);
        let reached = changed;
        if (compacted) {
          // Past the revision the watch resumes from: etcd cancels that watch, and the copy must
          // read everything again. (Compacting at exactly the resume revision drops the delete
          // tombstones there without cancelling the watch: an etcd corner no client can see.)
          reached = await store.apply([{ op: 'upsert', spec: specOf('later', 0) }]);
          await direct.kv.compact({ revision: String(reached) });
        }

        proxy.heal();
        await copy.waitForRevision(reached, 10_000);
        assert.deepEqual(
          [...copy.specs.keys()].sort(),
          compacted ? ['added', 'kept', 'later'] : ['added', 'kept'],
        );
        assert.equal(copy.specs.get('kept')?.partitions, 4);
        assert.equal(copy.specs.get('kept')?.revision, changed);
        // A copy read whole again attaches its new watch just after.
        if (!copy.connected) await untilEvent(copy, 'connection', 5000, (up) => up === true);
      });
    }
  });
});

describe('etcd stopped', () => {
  let etcd: EtcdServer;
  const clients: Etcd3[] = [];
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    for (const client of clients) client.close();
    await etcd?.cleanup();
  });

  test('copy: with etcd stopped it still answers, writes fail retriably at once, and after a restart the watch resumes', async (t) => {
    const cluster = uniqueCluster();
    const newClient = () => {
      const client = connectEtcd({ endpoints: [etcd.endpoint], requestTimeoutMs: REQUEST_TIMEOUT_MS });
      clients.push(client);
      return client;
    };
    const client = newClient();
    const copy = await KeyspaceCopy.start(client, { cluster });
    t.after(() => copy.close());
    const store = new EtcdSpecStore(client, { cluster });
    const created = await store.apply([{ op: 'upsert', spec: specOf('orders', 0, 2) }]);
    await copy.waitForRevision(created, 5000);
    const member = await Member.join(client, {
      cluster,
      member: { id: 'b1', zone: 'a', address: '127.0.0.1:9001' },
    });
    t.after(() => member.leave().catch(() => {}));
    await copy.waitForRevision(member.createRevision, 5000);

    const disconnected = untilEvent(copy, 'connection', 5000, (up) => up === false);
    await etcd.stop('SIGKILL');
    await disconnected;
    assert.equal(copy.specs.get('orders')?.partitions, 2, 'the copy stopped answering');
    const startedAt = Date.now();
    await assert.rejects(store.apply([{ op: 'upsert', spec: specOf('orders', created, 3) }]), (error) => {
      assert.ok(error instanceof ClusterUnavailableError, String(error));
      assert.equal(error.retriable, true);
      assert.match(error.message, /^applying topic changes: etcd unreachable .*; retry$/);
      return true;
    });
    assert.ok(
      Date.now() - startedAt < REQUEST_TIMEOUT_MS + 1000,
      `failed after ${Date.now() - startedAt} ms`,
    );

    await etcd.restart();
    // Changed by another broker as soon as etcd is back, whether or not this copy's watch is yet.
    const changed = await new EtcdSpecStore(newClient(), { cluster }).apply([
      { op: 'upsert', spec: specOf('orders', created, 5) },
      { op: 'upsert', spec: specOf('payments', 0) },
    ]);
    await copy.waitForRevision(changed, 10_000);
    assert.equal(copy.specs.get('orders')?.partitions, 5);
    assert.equal(copy.specs.get('payments')?.revision, changed);
    assert.equal(copy.connected, true);
    // etcd keeps leases across its restart: the member renews the same one and stays a member.
    await untilEvent(member, 'renewed', 5000);
    assert.equal(member.state, 'alive');
    assert.equal(copy.members.get('b1')?.leaseId, member.leaseId);
  });
});
