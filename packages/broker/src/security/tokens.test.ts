import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { AckPolicy, decodeAuthenticateResponse, ErrorCode } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { waitUntil } from '@booblik/testkit';
import { SignJWT } from 'jose';
import { authenticationTimeoutMs } from '../limits.js';
import { failureReason } from '../test-support/auth-kit.js';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';
import { failureWaitMaxMs } from './failure-limiter.js';
import { tokenKeysReloadMs } from './token-verifier.js';

const record = { topic: 't', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('r')] };
const secret = (fill: number) => Buffer.alloc(32, fill);
const line = (id: string, fill: number) => `${id} ${secret(fill).toString('base64url')}\n`;

/** A broker taking tokens, on a wall clock and a timer clock the test moves. */
async function tokenBroker(t: TestContext) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-keys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const keysFile = path.join(dir, 'keys');
  fs.writeFileSync(keysFile, line('k1', 1));
  let wallMs = Date.UTC(2026, 11, 3, 12);
  const clock = new ManualClock();
  const broker = await startBroker(
    t,
    { auth: 'required', authTokenKeysFile: keysFile },
    { clock, wallNowMs: () => wallMs },
  );
  const client = await RawClient.connect(broker.port);
  t.after(() => client.close());
  const sign = (kid: string, fill: number, claims: { sub?: string; expInS?: number } = {}) => {
    let jwt = new SignJWT({ groups: ['ops'] })
      .setProtectedHeader({ alg: 'HS256', kid })
      .setIssuedAt(Math.floor(wallMs / 1000))
      .setExpirationTime(Math.floor(wallMs / 1000) + (claims.expInS ?? 3600));
    if (claims.sub !== '') jwt = jwt.setSubject(claims.sub ?? 'svc-orders');
    return jwt.sign(secret(fill));
  };
  /** Authenticated once, so moving the clock past the unauthenticated close leaves this connection open. */
  const settle = async () => {
    assert.equal((await client.authenticate('TOKEN', await sign('k1', 1))).errorCode, ErrorCode.NONE);
    clock.advance(authenticationTimeoutMs);
  };
  return {
    ...broker,
    client,
    settle,
    keysFile,
    clock,
    sign,
    advanceWall: (ms: number) => {
      wallMs += ms;
    },
  };
}

describe('tokens', () => {
  it('a signed token authenticates as its subject until its expiry', async (t) => {
    const { client, sign } = await tokenBroker(t);
    const answer = await client.authenticate('TOKEN', await sign('k1', 1));
    assert.equal(answer.errorCode, ErrorCode.NONE);
    const { complete, principal, expiresAtMs } = decodeAuthenticateResponse(answer.body);
    assert.deepEqual([complete, principal], [true, 'svc-orders']);
    assert.equal(expiresAtMs, Date.UTC(2026, 11, 3, 13));
    assert.equal((await client.produce(record)).errorCode, ErrorCode.NONE);
  });

  it('a token that expires on a live connection gets CREDENTIALS_EXPIRED until a new one is sent on the same connection', async (t) => {
    const { client, sign, advanceWall } = await tokenBroker(t);
    assert.equal(
      (await client.authenticate('TOKEN', await sign('k1', 1, { expInS: 60 }))).errorCode,
      ErrorCode.NONE,
    );
    advanceWall(61_000);
    assert.equal((await client.produce(record)).errorCode, ErrorCode.CREDENTIALS_EXPIRED);
    assert.equal((await client.authenticate('TOKEN', await sign('k1', 1))).errorCode, ErrorCode.NONE);
    assert.equal((await client.produce(record)).errorCode, ErrorCode.NONE);
  });

  it('a wrong signature, an unknown key, an expired token and one with no subject are refused, each saying why', async (t) => {
    const { client, sign, clock, settle } = await tokenBroker(t);
    await settle();
    const refusal = async (token: string | Promise<string>) => {
      clock.advance(failureWaitMaxMs); // past the wait a run of failures earns
      return failureReason(await client.authenticate('TOKEN', await token));
    };
    assert.match(await refusal(sign('k1', 2)), /not a valid signed token/);
    assert.match(await refusal(sign('k9', 1)), /key this broker does not know/);
    assert.match(await refusal(sign('k1', 1, { expInS: -5 })), /expired/);
    assert.match(await refusal(sign('k1', 1, { sub: '' })), /claims|subject/);
    assert.match(await refusal('not.a.token'), /not a valid signed token/);
  });

  it('a new key in the keys file is taken without a restart, the old one still verifying; a bad file keeps the keys in use', async (t) => {
    const { client, sign, keysFile, clock, lines, settle } = await tokenBroker(t);
    await settle();
    const replace = (text: string) => {
      fs.writeFileSync(`${keysFile}.new`, text);
      fs.renameSync(`${keysFile}.new`, keysFile); // as certbot and cert-manager replace files
    };
    replace(line('k2', 2) + line('k1', 1));
    await waitUntil(async () => {
      clock.advance(tokenKeysReloadMs);
      return lines.some((l) => l.includes('token keys reloaded') && l.includes('k2, k1 (k2 signs)'));
    }, 'the new keys file read');
    assert.equal((await client.authenticate('TOKEN', await sign('k2', 2))).errorCode, ErrorCode.NONE);
    assert.equal((await client.authenticate('TOKEN', await sign('k1', 1))).errorCode, ErrorCode.NONE);
    replace('k3 short\n');
    await waitUntil(async () => {
      clock.advance(tokenKeysReloadMs);
      return lines.some((l) => l.includes('token keys file refused, keeping the keys in use'));
    }, 'the bad keys file refused');
    assert.equal((await client.authenticate('TOKEN', await sign('k2', 2))).errorCode, ErrorCode.NONE);
    assert.ok(!lines.some((l) => l.includes(secret(2).toString('base64url'))), 'no secret in the log');
  });
});
