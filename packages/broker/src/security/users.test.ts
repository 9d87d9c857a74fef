import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { AckPolicy, decodeUsersResponse, ErrorCode, scramCredential, UsersOp } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { authenticationTimeoutMs } from '../limits.js';
import { scramLogin } from '../test-support/auth-kit.js';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';
import { withEnv } from '../test-support/with-env.js';
import { USERS_FILE_NAME } from './user-store.js';

const record = { topic: 't', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('r')] };
const upsert = (name: string, password: string, iterations = 4096) => ({
  op: UsersOp.UPSERT,
  name,
  credential: scramCredential(password, randomBytes(16), iterations),
});

async function connect(t: TestContext, port: number) {
  const client = await RawClient.connect(port);
  t.after(() => client.close());
  return client;
}

async function securedBroker(t: TestContext, dataDir?: string) {
  const clock = new ManualClock();
  const broker = await withEnv({ BOOBLIK_BOOTSTRAP_USER: 'admin:admin-pw' }, () =>
    startBroker(
      t,
      { auth: 'required', authSuperusers: ['admin'], ...(dataDir ? { dataDir } : {}) },
      { clock, wallNowMs: Date.now },
    ),
  );
  const admin = await connect(t, broker.port);
  assert.equal((await scramLogin(admin, 'admin', 'admin-pw')).final.errorCode, ErrorCode.NONE);
  return { ...broker, admin, clock };
}

describe('users', () => {
  it('a superuser adds a user who can then log in; the list names users, never keys; the file holds no password', async (t) => {
    const { admin, port, dataDir } = await securedBroker(t);
    const added = await admin.users(upsert('bob', 'bob-password'));
    assert.equal(added.errorCode, ErrorCode.NONE);
    assert.deepEqual(decodeUsersResponse(added.body), [
      { name: 'admin', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
      { name: 'bob', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
    ]);
    const bob = await connect(t, port);
    assert.equal((await scramLogin(bob, 'bob', 'bob-password')).final.errorCode, ErrorCode.NONE);
    const file = path.join(dataDir, USERS_FILE_NAME);
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(!text.includes('bob-password') && !text.includes('admin-pw'));
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'readable by the broker alone');
  });

  it('a user who is not a superuser is NOT_AUTHORIZED to manage users', async (t) => {
    const { admin, port } = await securedBroker(t);
    await admin.users(upsert('bob', 'bob-password'));
    const bob = await connect(t, port);
    await scramLogin(bob, 'bob', 'bob-password');
    assert.equal((await bob.users(upsert('eve', 'x'.repeat(12)))).errorCode, ErrorCode.NOT_AUTHORIZED);
    assert.equal((await bob.users({ op: UsersOp.LIST })).errorCode, ErrorCode.NOT_AUTHORIZED);
  });

  it('too few iterations, a short salt and removing nobody are INVALID_ARGUMENT, and change nothing', async (t) => {
    const { admin } = await securedBroker(t);
    const weak = upsert('bob', 'pw', 1000);
    assert.equal((await admin.users(weak)).errorCode, ErrorCode.INVALID_ARGUMENT);
    const short = {
      ...upsert('bob', 'pw'),
      credential: { ...upsert('bob', 'pw').credential, salt: Buffer.alloc(4) },
    };
    assert.equal((await admin.users(short)).errorCode, ErrorCode.INVALID_ARGUMENT);
    assert.equal(
      (await admin.users({ op: UsersOp.REMOVE, name: 'nobody' })).errorCode,
      ErrorCode.INVALID_ARGUMENT,
    );
    assert.deepEqual(
      decodeUsersResponse((await admin.users({ op: UsersOp.LIST })).body).map((u) => u.name),
      ['admin'],
    );
  });

  it("a removed user's live connection is closed at once, and it cannot log in again", async (t) => {
    const { admin, port } = await securedBroker(t);
    await admin.users(upsert('bob', 'bob-password'));
    const bob = await connect(t, port);
    await scramLogin(bob, 'bob', 'bob-password');
    assert.equal((await bob.produce(record)).errorCode, ErrorCode.NONE);
    assert.equal((await admin.users({ op: UsersOp.REMOVE, name: 'bob' })).errorCode, ErrorCode.NONE);
    await bob.closedPromise;
    const again = await connect(t, port);
    assert.equal(
      (await scramLogin(again, 'bob', 'bob-password')).final.errorCode,
      ErrorCode.AUTHENTICATION_FAILED,
    );
  });

  it('users survive a restart; the bootstrap variable adds nobody once a user exists', async (t) => {
    const first = await securedBroker(t);
    await first.admin.users(upsert('bob', 'bob-password'));
    await first.broker.close();
    const dataDir = first.dataDir;
    const second = await withEnv({ BOOBLIK_BOOTSTRAP_USER: 'intruder:pw12345' }, () =>
      startBroker(t, { auth: 'required', dataDir }),
    );
    const bob = await connect(t, second.port);
    assert.equal((await scramLogin(bob, 'bob', 'bob-password')).final.errorCode, ErrorCode.NONE);
    const intruder = await connect(t, second.port);
    assert.equal(
      (await scramLogin(intruder, 'intruder', 'pw12345')).final.errorCode,
      ErrorCode.AUTHENTICATION_FAILED,
    );
  });

  it('a connection that has not authenticated within the time allowed is closed, served nothing', async (t) => {
    const { port, clock, broker } = await securedBroker(t);
    const stranger = await connect(t, port);
    assert.equal((await stranger.produce(record)).errorCode, ErrorCode.AUTHENTICATION_REQUIRED);
    clock.advance(authenticationTimeoutMs - 1);
    assert.equal(stranger.closed, false);
    clock.advance(1);
    await stranger.closedPromise;
    assert.equal(broker.metrics.connectionsClosedUnauthenticated, 1);
  });
});
