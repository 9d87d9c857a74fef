import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AckPolicy, decodeUsersResponse, ErrorCode, UsersOp } from '@booblik/protocol';
import { ConfigError } from '../errors.js';
import { scramLogin } from '../test-support/auth-kit.js';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';
import { withEnv } from '../test-support/with-env.js';
import { UserStoreCorruptError } from './errors.js';
import { USERS_FILE_NAME } from './user-store.js';

describe('security at start', () => {
  it('a users file that does not parse stops the start rather than opening the broker', async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-users-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dataDir, USERS_FILE_NAME), '{"format":1,"users":[{"name":"a"}]}');
    await assert.rejects(startBroker(t, { auth: 'required', dataDir }), UserStoreCorruptError);
  });

  it('auth required in a cluster without token keys is refused at start, saying brokers need them', async (t) => {
    await assert.rejects(
      startBroker(t, { auth: 'required', clusterEtcd: ['http://127.0.0.1:1'] }),
      (e: unknown) => e instanceof ConfigError && /needs booblik.auth.token.keys.file/.test(e.message),
    );
  });

  it('a token keys file that is missing or bad stops the start, naming the file, never a secret', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-keys-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'keys');
    await assert.rejects(startBroker(t, { authTokenKeysFile: file }), /keys cannot be read \(ENOENT\)/);
    fs.writeFileSync(file, 'k1 c2hvcnQ\n');
    await assert.rejects(
      startBroker(t, { authTokenKeysFile: file }),
      (e: unknown) =>
        e instanceof ConfigError &&
        /keys:1: key k1: the secret is 5 bytes/.test(e.message) &&
        !e.message.includes('c2hvcnQ'),
    );
  });

  it('with auth off everything is served unauthenticated, and a client with credentials still authenticates', async (t) => {
    const { port } = await withEnv({ BOOBLIK_BOOTSTRAP_USER: 'alice:alice-pw' }, () => startBroker(t));
    const client = await RawClient.connect(port);
    t.after(() => client.close());
    const record = { topic: 't', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('r')] };
    assert.equal((await client.produce(record)).errorCode, ErrorCode.NONE);
    assert.equal((await scramLogin(client, 'alice', 'alice-pw')).final.errorCode, ErrorCode.NONE);
    const listed = await client.users({ op: UsersOp.LIST });
    assert.deepEqual(
      decodeUsersResponse(listed.body).map((u) => u.name),
      ['alice'],
    );
  });

  it('TLS to etcd named by an IP address is refused at start, saying to use a host name', async (t) => {
    await assert.rejects(
      startBroker(t, { clusterEtcd: ['https://127.0.0.1:2379'], clusterEtcdCaFile: '/nonexistent/ca.pem' }),
      (e: unknown) =>
        e instanceof ConfigError && /name etcd by a host name in its certificate/.test(e.message),
    );
  });
});
