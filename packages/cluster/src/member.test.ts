import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Etcd3 } from 'etcd3';
import { LeaseLostError, MemberIdTakenError } from './errors.js';
import { connectEtcd } from './etcd-client.js';
import { KeyspaceCopy } from './keyspace-copy.js';
import { Member } from './member.js';
import { type EtcdServer, startEtcd } from './test-support/etcd-server.js';
import { uniqueCluster, untilCopy, untilEvent } from './test-support/fixture.js';

/** The shortest lease etcd grants: keeps the expiry tests short. */
const LEASE_MS = 2000;
const childScript = fileURLToPath(new URL('./test-support/member-child.js', import.meta.url));

describe('members', () => {
  let etcd: EtcdServer;
  const clients: Etcd3[] = [];
  const newClient = () => {
    const client = connectEtcd({ endpoints: [etcd.endpoint] });
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

  test('members: two brokers see each other through their watched copies', async (t) => {
    const cluster = uniqueCluster();
    const [clientA, clientB] = [newClient(), newClient()];
    const copyA = await KeyspaceCopy.start(clientA, { cluster });
    const copyB = await KeyspaceCopy.start(clientB, { cluster });
    t.after(() => Promise.all([copyA.close(), copyB.close()]));
    const a = await Member.join(clientA, {
      cluster,
      member: { id: 'a', zone: 'z1', address: '127.0.0.1:9001' },
    });
    const b = await Member.join(clientB, {
      cluster,
      member: { id: 'b', zone: 'z2', address: '127.0.0.1:9002' },
    });
    t.after(() => Promise.all([a.leave(), b.leave()]));
    for (const copy of [copyA, copyB]) {
      await untilCopy(copy, 'both members', () => copy.members.size === 2, 5000);
      assert.deepEqual(copy.members.get('b'), {
        id: 'b',
        zone: 'z2',
        address: '127.0.0.1:9002',
        createRevision: b.createRevision,
        leaseId: b.leaseId,
      });
      assert.equal(copy.members.get('a')?.address, '127.0.0.1:9001');
    }
    assert.ok(a.createRevision < b.createRevision, 'the first to join has the lower create revision');

    await b.leave();
    await untilCopy(copyA, 'b gone after it left', () => !copyA.members.has('b'), 5000);
  });

  test('members: a SIGKILLed broker is gone within its lease + 1 s, and its id can join again', async (t) => {
    const cluster = uniqueCluster();
    const client = newClient();
    const copy = await KeyspaceCopy.start(client, { cluster });
    t.after(() => copy.close());
    const child = spawn(process.execPath, [childScript, etcd.endpoint, cluster, 'doomed', String(LEASE_MS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const [line] = (await Promise.race([
      once(createInterface({ input: child.stdout! }), 'line'),
      once(child, 'exit').then(([code]) => Promise.reject(new Error(`member child exited ${code}`))),
    ])) as [string];
    const joined = JSON.parse(line) as { leaseId: string; createRevision: number };
    await copy.waitForRevision(joined.createRevision, 5000);
    assert.equal(copy.members.get('doomed')?.leaseId, joined.leaseId);

    process.kill(child.pid!, 'SIGKILL');
    const killedAt = Date.now();
    await untilCopy(copy, 'the killed member gone', () => !copy.members.has('doomed'), LEASE_MS + 1000);
    const goneMs = Date.now() - killedAt;
    assert.ok(goneMs <= LEASE_MS + 1000, `gone after ${goneMs} ms`);
    t.diagnostic(`member key gone ${goneMs} ms after SIGKILL (lease ${LEASE_MS} ms)`);

    const again = await Member.join(client, {
      cluster,
      member: { id: 'doomed', zone: 'a', address: '127.0.0.1:9' },
      leaseMs: LEASE_MS,
    });
    t.after(() => again.leave());
    await untilCopy(
      copy,
      'the member back',
      () => copy.members.get('doomed')?.leaseId === again.leaseId,
      5000,
    );
  });

  test('members: a second live broker with the same id is refused once the first outlives a lease', async (t) => {
    const cluster = uniqueCluster();
    const client = newClient();
    const first = await Member.join(client, {
      cluster,
      member: { id: 'twin', zone: 'a', address: '127.0.0.1:9001' },
      leaseMs: LEASE_MS,
    });
    t.after(() => first.leave());
    await assert.rejects(
      Member.join(newClient(), {
        cluster,
        member: { id: 'twin', zone: 'b', address: '127.0.0.1:9002' },
        leaseMs: LEASE_MS,
      }),
      (error) => error instanceof MemberIdTakenError && /another live broker holds/.test(error.message),
    );
    assert.equal(first.state, 'alive');
  });

  test('members: a member notices when its lease is revoked behind its back', async () => {
    const cluster = uniqueCluster();
    const client = newClient();
    const member = await Member.join(client, {
      cluster,
      member: { id: 'm', zone: 'a', address: '127.0.0.1:9001' },
      leaseMs: LEASE_MS,
    });
    const lost = untilEvent(member, 'lost', LEASE_MS + 1000);
    await newClient().leaseClient.leaseRevoke({ ID: member.leaseId });
    const [error] = await lost;
    assert.ok(error instanceof LeaseLostError, String(error));
    assert.equal(member.state, 'lost');
  });

  test('members: bad member settings are refused with the field named', async () => {
    const client = newClient();
    const cluster = uniqueCluster();
    await assert.rejects(
      Member.join(client, { cluster, member: { id: 'm', zone: 'a', address: '127.0.0.1:1' }, leaseMs: 1500 }),
      /leaseMs: 1500, expected whole seconds >= 2000/,
    );
    await assert.rejects(
      Member.join(client, { cluster, member: { id: 'a/b', zone: 'a', address: '127.0.0.1:1' } }),
      /member id: "a\/b", expected a letter or digit first/,
    );
    await assert.rejects(
      Member.join(client, { cluster, member: { id: 'm', zone: 'a', address: 'nowhere' } }),
      /address: "nowhere", expected host:port/,
    );
  });
});
