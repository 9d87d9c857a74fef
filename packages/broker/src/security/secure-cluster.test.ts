/**
 * A cluster of three broker processes on a real etcd with `booblik.tls=required` and
 * `booblik.auth=required`: brokers dial each other with TLS and prove themselves with tokens of the
 * cluster's keys, so proxying and replication work as in plaintext; users live in etcd, so a user added through one broker logs in on the others, and a
 * removed one's connections are closed everywhere; a user may not REPLICATE.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectEtcd, Keyspace } from '@booblik/cluster';
import {
  AckPolicy,
  decodeProduceResponse,
  decodeUsersResponse,
  ErrorCode,
  encodeProduceRequest,
  encodeReplicateRequest,
  scramCredential,
  topicSpecWithDefaults,
  UsersOp,
} from '@booblik/protocol';
import { makeCertificates, waitUntil, within } from '@booblik/testkit';
import { scramLogin } from '../test-support/auth-kit.js';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { fetchAll, ok, primaries } from '../test-support/cluster-wire.js';
import { RawClient } from '../test-support/raw-client.js';

let kit: ClusterKit;
let keysDir: string;
let ca: Buffer;
let certs: Awaited<ReturnType<typeof makeCertificates>>;
const clients: RawClient[] = [];
const cleanups: (() => unknown)[] = [];

async function loggedIn(index: number, user = 'admin', password = 'admin-pw'): Promise<RawClient> {
  const client = await RawClient.connectTls(kit.brokers[index]!.port, { ca });
  clients.push(client);
  assert.equal(
    (await scramLogin(client, user, password)).final.errorCode,
    ErrorCode.NONE,
    `${user} at b${index + 1}`,
  );
  return client;
}

before(async () => {
  keysDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cluster-keys-'));
  const keys = path.join(keysDir, 'keys');
  fs.writeFileSync(keys, `k1 ${randomBytes(32).toString('base64url')}\n`);
  certs = await makeCertificates({ after: (f) => void cleanups.push(f as () => unknown) });
  ca = fs.readFileSync(certs.ca);
  kit = await startClusterKit({
    // The fourth is started by the tests of joining with a certificate of another CA.
    brokers: 4,
    start: false,
    flags: [
      '--auth=required',
      `--auth.token.keys.file=${keys}`,
      '--auth.superusers=admin',
      '--tls=required',
      `--tls.cert.file=${certs.server.cert}`,
      `--tls.key.file=${certs.server.key}`,
      `--tls.ca.file=${certs.ca}`,
    ],
    env: { BOOBLIK_BOOTSTRAP_USER: 'admin:admin-pw' },
  });
  // One after another: b1 is the oldest member, the allocator's first leader.
  for (const b of kit.brokers.slice(0, 3)) await b.start();
});

after(async () => {
  for (const c of clients) c.close();
  await kit?.cleanup();
  for (const f of cleanups) await f();
  fs.rmSync(keysDir, { recursive: true, force: true });
});

describe('a cluster with authentication required', () => {
  it('PRODUCE v1 through any broker reaches each primary and its replicas (proxied and replicated as brokers)', async () => {
    const admin = await loggedIn(0);
    const spec = { ...topicSpecWithDefaults({ name: 'sec', partitions: 3, revision: 0 }), replication: 3 };
    ok(await admin.apply([{ op: 'upsert', spec }]), 'APPLY sec');
    await waitUntil(
      async () => (await primaries(admin, 'sec')).every((p) => p !== ''),
      'every partition has a primary',
    );
    for (let p = 0; p < 3; p++) {
      // FORCED: answered once every in-sync replica holds it, which REPLICATE between brokers gives.
      const id = admin.id();
      admin.send(
        encodeProduceRequest(id, {
          topic: 'sec',
          partition: p,
          ack: AckPolicy.FORCED,
          records: [Buffer.from(`r${p}`)],
        }),
      );
      const answer = await admin.expect(id);
      assert.equal(answer.errorCode, ErrorCode.NONE, `sec-${p}`);
      assert.equal(decodeProduceResponse(answer.body).baseOffset, 0);
    }
  });

  it('a user added through one broker logs in on the others; removed, its connections elsewhere close within a second', async () => {
    const admin = await loggedIn(0);
    const credential = scramCredential('bob-password', randomBytes(16), 4096);
    ok(await admin.users({ op: UsersOp.UPSERT, name: 'bob', credential }), 'USERS add bob');
    for (const index of [1, 2]) {
      const there = await loggedIn(index);
      await waitUntil(
        async () =>
          decodeUsersResponse(ok(await there.users({ op: UsersOp.LIST }), 'USERS list')).some(
            (u) => u.name === 'bob',
          ),
        `bob known at b${index + 1}`,
      );
    }
    const bobElsewhere = await loggedIn(2, 'bob', 'bob-password');
    await loggedIn(1, 'bob', 'bob-password');
    ok(await admin.users({ op: UsersOp.REMOVE, name: 'bob' }), 'USERS remove bob');
    await within(bobElsewhere.closedPromise, 1000, "bob's connection at b3 closed");
  });

  it('a broker with a certificate and CA file of another CA may not join: it exits 2, no member verified', async () => {
    const b4 = kit.brokers[3]!;
    const foreignFlags = [
      `--tls.cert.file=${certs.foreign.cert}`,
      `--tls.key.file=${certs.foreign.key}`,
      `--tls.ca.file=${certs.otherCa}`,
    ];
    await b4.start(foreignFlags).catch(() => {}); // it may exit before or after it listens
    const p = b4.process!;
    assert.equal(await p.exitCode(), 2, p.output());
    assert.match(p.output(), /may not join: no member's TLS handshake verified \(b\d: /);
    assert.doesNotMatch(p.output(), /joined as b4/);
    // It never became a member: etcd holds the three others only.
    const etcd = connectEtcd({ endpoints: [kit.etcd.endpoint] });
    try {
      const members = await etcd.getAll().prefix(new Keyspace(kit.cluster).membersPrefix).keys();
      assert.deepEqual(members.map((k) => k.split('/').at(-1)).sort(), ['b1', 'b2', 'b3']);
    } finally {
      etcd.close();
    }
  });

  it("a broker whose own certificate is not signed by the cluster's CA may not join: it exits 2 saying so", async () => {
    const b4 = kit.brokers[3]!;
    await b4
      .start([`--tls.cert.file=${certs.foreign.cert}`, `--tls.key.file=${certs.foreign.key}`])
      .catch(() => {});
    const p = b4.process!;
    assert.equal(await p.exitCode(), 2, p.output());
    assert.match(
      p.output(),
      /may not join: its certificate \(CN=booblik foreign, issued by CN=booblik other CA\) is not signed by a CA of booblik.tls.ca.file/,
    );
    assert.doesNotMatch(p.output(), /joined as b4/);
  });

  it('a user, even a superuser, may not REPLICATE into a broker', async () => {
    const admin = await loggedIn(1);
    const id = admin.id();
    const frames = encodeReplicateRequest(id, {
      topic: 'sec',
      partition: 0,
      epoch: 99,
      recordsEpoch: 99,
      baseOffset: 0,
      prevEpoch: 0,
      commitOffset: 0,
      flags: 0,
      count: 1,
      stored: Buffer.from('00000001aabbccdd78', 'hex'),
    });
    admin.send(Buffer.concat(frames));
    assert.equal((await admin.expect(id)).errorCode, ErrorCode.NOT_AUTHORIZED);
  });

  it('a SIGKILL of a primary: writes go on through a new primary, and every acknowledged record is read back', async () => {
    const admin = await loggedIn(0);
    const spec = {
      ...topicSpecWithDefaults({ name: 'failover', partitions: 1, revision: 0 }),
      replication: 3,
    };
    ok(await admin.apply([{ op: 'upsert', spec }]), 'APPLY failover');
    await waitUntil(async () => (await primaries(admin, 'failover'))[0] !== '', 'a primary');
    const primary = (await primaries(admin, 'failover'))[0]!;
    const victim = kit.brokers.find((b) => b.address === primary)!;
    // Produce through a broker that stays up: PRODUCE v1, proxied to whichever broker is primary.
    const via = await loggedIn(kit.brokers.indexOf(victim) === 0 ? 1 : 0);
    const acknowledged = new Map<number, string>();
    const produce = async (payload: string): Promise<number> => {
      const id = via.id();
      via.send(
        encodeProduceRequest(id, {
          topic: 'failover',
          partition: 0,
          ack: AckPolicy.FORCED,
          records: [Buffer.from(payload)],
        }),
      );
      const answer = await via.expect(id);
      if (answer.errorCode === ErrorCode.NONE)
        acknowledged.set(decodeProduceResponse(answer.body).baseOffset, payload);
      return answer.errorCode;
    };
    for (let i = 0; i < 10; i++) assert.equal(await produce(`before-${i}`), ErrorCode.NONE);
    await victim.kill();
    let after = 0;
    const deadline = performance.now() + 30_000;
    for (let i = 0; after < 10; i++) {
      assert.ok(performance.now() < deadline, `10 writes after the SIGKILL within 30 s (${after} so far)`);
      const code = await produce(`after-${i}`);
      if (code === ErrorCode.NONE) after++;
      else await new Promise((r) => setTimeout(r, 100)); // the new primary is being chosen
    }
    const stored = await fetchAll(via, 'failover', 0);
    for (const [offset, payload] of acknowledged) assert.equal(stored[offset], payload, `offset ${offset}`);
    await victim.start();
  });
});
