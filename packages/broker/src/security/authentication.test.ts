import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import {
  AckPolicy,
  clientFirst,
  decodeAuthenticateResponse,
  ErrorCode,
  encodeApiVersionsRequest,
  encodeProduceRequest,
  NEVER_EXPIRES,
} from '@booblik/protocol';
import { failureReason, SCRAM, scramLogin } from '../test-support/auth-kit.js';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';
import { withEnv } from '../test-support/with-env.js';

const record = { topic: 't', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('r')] };

async function securedBroker(t: TestContext) {
  const broker = await withEnv({ BOOBLIK_BOOTSTRAP_USER: 'alice:s3cret-pw' }, () =>
    startBroker(t, { auth: 'required', authSuperusers: ['alice'] }),
  );
  const client = await RawClient.connect(broker.port);
  t.after(() => client.close());
  return { ...broker, client };
}

describe('authentication required', () => {
  it('before authenticating, PRODUCE and METADATA get AUTHENTICATION_REQUIRED and the connection stays open; API_VERSIONS is served', async (t) => {
    const { client } = await securedBroker(t);
    assert.equal((await client.produce(record)).errorCode, ErrorCode.AUTHENTICATION_REQUIRED);
    assert.equal((await client.metadata('t')).errorCode, ErrorCode.AUTHENTICATION_REQUIRED);
    const id = client.id();
    client.send(encodeApiVersionsRequest(id));
    assert.equal((await client.expect(id)).errorCode, ErrorCode.NONE);
    assert.equal(client.closed, false);
  });

  it('an ack NONE PRODUCE before authenticating is stored nowhere and answered never', async (t) => {
    const { client, broker } = await securedBroker(t);
    client.send(encodeProduceRequest(client.id(), { ...record, ack: AckPolicy.NONE }));
    assert.equal((await scramLogin(client, 'alice', 's3cret-pw')).final.errorCode, ErrorCode.NONE);
    assert.equal(broker.partitions.get('t', 0)!.highWatermark.value, 0);
  });

  it('SCRAM-SHA-256 with the bootstrap user: the broker proves itself, names the principal, and PRODUCE is served', async (t) => {
    const { client, lines } = await securedBroker(t);
    const { final } = await scramLogin(client, 'alice', 's3cret-pw');
    const answer = decodeAuthenticateResponse(final.body);
    assert.deepEqual([answer.complete, answer.principal, answer.expiresAtMs], [true, 'alice', NEVER_EXPIRES]);
    assert.equal((await client.produce(record)).errorCode, ErrorCode.NONE);
    assert.ok(lines.some((l) => l.includes('created user alice from BOOBLIK_BOOTSTRAP_USER')));
    assert.ok(!lines.some((l) => l.includes('s3cret-pw')), 'the password is never logged');
  });

  it('a wrong password and an unknown user get the same reason, and an unknown user gets a salt like a known one', async (t) => {
    const { client } = await securedBroker(t);
    const wrong = await scramLogin(client, 'alice', 'guess');
    const unknown = await scramLogin(client, 'mallory', 'guess');
    assert.equal(failureReason(wrong.final), failureReason(unknown.final));
    assert.equal((await client.produce(record)).errorCode, ErrorCode.AUTHENTICATION_REQUIRED);
    const saltOf = async (user: string) => {
      const answer = await client.authenticate(SCRAM, clientFirst(user).message);
      return /,s=([^,]+),i=(\d+)/.exec(decodeAuthenticateResponse(answer.body).data.toString())!.slice(1);
    };
    const [decoySalt, decoyIterations] = await saltOf('mallory');
    assert.deepEqual(await saltOf('mallory'), [decoySalt, decoyIterations], 'the same decoy each time');
    assert.equal(decoyIterations, (await saltOf('alice'))[1]);
  });

  it('a replayed client-final, and one with no exchange started, are refused', async (t) => {
    const { client, port } = await securedBroker(t);
    const { clientFinalMessage } = await scramLogin(client, 'alice', 's3cret-pw');
    failureReason(await client.authenticate(SCRAM, clientFinalMessage));
    assert.equal(
      (await client.produce(record)).errorCode,
      ErrorCode.AUTHENTICATION_REQUIRED,
      'a failed re-authentication fails closed',
    );
    const fresh = await RawClient.connect(port);
    t.after(() => fresh.close());
    failureReason(await fresh.authenticate(SCRAM, clientFinalMessage));
  });

  it("a client-final whose nonce is not the exchange's is refused", async (t) => {
    const { client } = await securedBroker(t);
    await client.authenticate(SCRAM, clientFirst('alice', 'abc').message);
    failureReason(await client.authenticate(SCRAM, 'c=biws,r=abcOTHER,p=AAAA'));
  });

  it('an unknown mechanism is INVALID_ARGUMENT naming the ones there are', async (t) => {
    const { client } = await securedBroker(t);
    const answer = await client.authenticate('PLAIN', 'x');
    assert.equal(answer.errorCode, ErrorCode.INVALID_ARGUMENT);
    assert.match(answer.body.toString(), /SCRAM-SHA-256, TOKEN/);
  });

  it('a brute-force loop is made to wait, while an authenticated client is served', async (t) => {
    const { client, port } = await securedBroker(t);
    assert.equal((await scramLogin(client, 'alice', 's3cret-pw')).final.errorCode, ErrorCode.NONE);
    const attacker = await RawClient.connect(port);
    t.after(() => attacker.close());
    const reasons: string[] = [];
    for (let i = 0; i < 8; i++)
      reasons.push(failureReason((await scramLogin(attacker, 'alice', `guess${i}`)).final));
    assert.match(reasons.at(-1)!, /too many failed attempts; wait \d+ ms/);
    // Even the right password is not looked at while the address waits.
    assert.match(
      failureReason((await scramLogin(attacker, 'alice', 's3cret-pw')).final),
      /too many failed attempts/,
    );
    assert.equal((await client.produce(record)).errorCode, ErrorCode.NONE);
  });
});
