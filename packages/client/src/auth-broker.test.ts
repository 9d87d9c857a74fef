import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { BrokerProcess } from '@booblik/testkit';
import { Connection } from './connection.js';
import { AuthenticationFailedError, AuthenticationRequiredError, NotAuthorizedError } from './errors.js';
import { InvalidArgumentRefusal } from './topic-errors.js';

const key = randomBytes(32);

/** An HS256 JWT as `booblik tokens issue` makes one (the client package does not depend on jose). */
function token(sub: string, expSeconds: number): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signed = `${part({ alg: 'HS256', typ: 'JWT', kid: 'k1' })}.${part({ sub, iat: Math.floor(Date.now() / 1000), exp: expSeconds })}`;
  return `${signed}.${createHmac('sha256', key).update(signed).digest('base64url')}`;
}

/** A broker with booblik.auth=required, the superuser admin (password admin-pw) and the token key k1. */
async function secured(t: TestContext): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-client-auth-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const keys = path.join(dir, 'keys');
  fs.writeFileSync(keys, `k1 ${key.toString('base64url')}\n`, { mode: 0o600 });
  const broker = await BrokerProcess.start(t, {
    http: false,
    env: { BOOBLIK_BOOTSTRAP_USER: 'admin:admin-pw' },
    flags: [
      '--topics=orders:1',
      '--booblik.auth=required',
      '--booblik.auth.superusers=admin',
      `--booblik.auth.token.keys.file=${keys}`,
    ],
  });
  return broker.address;
}

describe('auth: against a real broker with booblik.auth=required', () => {
  it('SCRAM logs in (the broker proves itself), users are managed by the superuser, others are refused', async (t) => {
    const address = await secured(t);
    const anonymous = await Connection.connect(address);
    await assert.rejects(anonymous.metadata(), AuthenticationRequiredError);
    anonymous.destroy();
    await assert.rejects(
      Connection.connect(address, { auth: { user: 'admin', password: 'wrong' } }),
      AuthenticationFailedError,
    );
    const admin = await Connection.connect(address, { auth: { user: 'admin', password: 'admin-pw' } });
    assert.equal(admin.principal, 'admin');
    const users = await admin.upsertUser('app', 'app-pw');
    assert.deepEqual(
      users.map((u) => [u.name, u.iterations]),
      [
        ['admin', 4096],
        ['app', 4096],
      ],
    );
    await assert.rejects(admin.removeUser('nobody'), InvalidArgumentRefusal);
    const app = await Connection.connect(address, { auth: { user: 'app', password: 'app-pw' } });
    assert.equal((await app.metadata('orders'))[0]?.name, 'orders');
    await assert.rejects(app.listUsers(), NotAuthorizedError);
    app.destroy();
    admin.destroy();
  });

  it('a token that expires on a live connection is refreshed from its provider, and the request answered', async (t) => {
    const address = await secured(t);
    const issued: number[] = [];
    // The first token ends at the next whole second; the fresh one an hour later.
    const provider = () => {
      const exp =
        issued.length === 0 ? Math.floor(Date.now() / 1000) + 1 : Math.floor(Date.now() / 1000) + 3600;
      issued.push(exp);
      return token('svc-orders', exp);
    };
    const conn = await Connection.connect(address, { auth: { token: provider } });
    assert.equal(conn.principal, 'svc-orders');
    assert.equal(conn.credentialsExpireAtMs, issued[0]! * 1000);
    // Waits on the clock for the token's end: bounded by its exp, at most a second away.
    while (Date.now() <= conn.credentialsExpireAtMs! + 50) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await conn.metadata('orders'))[0]?.name, 'orders');
    assert.equal(issued.length, 2, 'a fresh token was asked for');
    assert.equal(conn.credentialsExpireAtMs, issued[1]! * 1000);
    conn.destroy();
  });
});
