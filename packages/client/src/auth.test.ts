import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  AckPolicy,
  ApiKey,
  ErrorCode,
  encodeAuthenticateResponse,
  encodeErrorResponse,
  NEVER_EXPIRES,
  parseClientFirst,
  scramCredential,
  serverFirst,
  verifyClientFinal,
} from '@booblik/protocol';
import { Client } from './client.js';
import { Connection } from './connection.js';
import {
  AuthenticationFailedError,
  AuthenticationRequiredError,
  BrokerUnverifiedError,
  CredentialsExpiredError,
  InvalidArgumentError,
  isConnectionLoss,
  NotAuthorizedError,
} from './errors.js';
import { FakeAuth, type FakeAuthOptions } from './test-support/fake-auth.js';
import { FakeBroker, type FakeHandler } from './test-support/fake-broker.js';
import { MemoryLog } from './test-support/memory-log.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

/** Every frame the broker got, as bytes: where a password must never be found. */
const frames: Buffer[] = [];

async function serve(options: FakeAuthOptions): Promise<{ auth: FakeAuth; broker: FakeBroker }> {
  const auth = new FakeAuth(options);
  const inner = auth.wrap(new MemoryLog({ t: 1 }).handle);
  const broker = await FakeBroker.start((req) => {
    frames.push(req.frame);
    return inner(req);
  });
  brokers.push(broker);
  return { auth, broker };
}

async function fake(handler: FakeHandler): Promise<FakeBroker> {
  const broker = await FakeBroker.start(handler);
  brokers.push(broker);
  return broker;
}

// RFC 7677, section 3: the password, salt and server nonce of its vector.
const rfc = {
  password: 'pencil',
  salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
  serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
};

/**
 * A SCRAM broker for `user` with RFC 7677's salt and server nonce; `final` may change its
 * server-final message (a broker that does not hold the user's keys).
 */
function rfcBroker(final: (honest: string) => string = (honest) => honest): FakeHandler {
  const credential = scramCredential(rfc.password, rfc.salt, 4096);
  let exchange: { first: ReturnType<typeof parseClientFirst>; sent: string } | undefined;
  return ({ request }) => {
    if (request.apiKey !== ApiKey.AUTHENTICATE) return encodeErrorResponse(request.correlationId, 0);
    const message = request.body.data.toString();
    if (message.startsWith('n,')) {
      const first = parseClientFirst(message);
      exchange = { first, sent: serverFirst(credential, first.nonce, rfc.serverNonce) };
      return encodeAuthenticateResponse(request.correlationId, {
        complete: false,
        data: Buffer.from(exchange.sent),
        principal: '',
        expiresAtMs: NEVER_EXPIRES,
      });
    }
    const honest = verifyClientFinal(credential, exchange!.first, exchange!.sent, message);
    return encodeAuthenticateResponse(request.correlationId, {
      complete: true,
      data: Buffer.from(final(honest)),
      principal: exchange!.first.user,
      expiresAtMs: NEVER_EXPIRES,
    });
  };
}

describe('auth: SCRAM-SHA-256', () => {
  it("logs in with the RFC 7677 vector's password and salt: the broker checks the proof, the client the signature", async () => {
    const broker = await fake(rfcBroker());
    const conn = await Connection.connect(broker.address, { auth: { user: 'user', password: 'pencil' } });
    assert.equal(conn.principal, 'user');
    assert.equal(conn.credentialsExpireAtMs, NEVER_EXPIRES);
    const [first, final] = broker.received;
    assert.equal(first?.apiKey, ApiKey.AUTHENTICATE);
    assert.match((first!.body as { data: Buffer }).data.toString(), /^n,,n=user,r=[^,]+$/);
    assert.match((final!.body as { data: Buffer }).data.toString(), /^c=biws,r=[^,]+%hvYD[^,]+,p=/);
    await conn.close();
  });

  it('a broker whose server signature is wrong fails the connect, and the connection is not kept', async () => {
    const broker = await fake(rfcBroker(() => 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='));
    const peer = broker.nextConnection();
    await assert.rejects(
      Connection.connect(broker.address, { auth: { user: 'user', password: 'pencil' } }),
      (e: unknown) =>
        e instanceof BrokerUnverifiedError &&
        /server signature is wrong/.test(e.message) &&
        !/pencil/.test(e.message),
    );
    await new Promise((resolve) => (async () => (await peer).socket.once('close', resolve))());
  });

  it('a broker that ends the exchange at its first answer, unsigned, fails the connect', async () => {
    const broker = await fake(({ request }) =>
      encodeAuthenticateResponse(request.correlationId, {
        complete: true,
        data: Buffer.alloc(0),
        principal: 'user',
        expiresAtMs: NEVER_EXPIRES,
      }),
    );
    await assert.rejects(
      Connection.connect(broker.address, { auth: { user: 'user', password: 'pencil' } }),
      (e: unknown) => e instanceof BrokerUnverifiedError && /before it signed anything/.test(e.message),
    );
  });

  it('a broker asking for fewer than 4096 iterations (or a freezing number) gets no proof', async () => {
    for (const iterations of [1, 100_000_000]) {
      const broker = await fake(({ request }) => {
        const first = parseClientFirst((request.body as { data: Buffer }).data.toString());
        return encodeAuthenticateResponse(request.correlationId, {
          complete: false,
          data: Buffer.from(`r=${first.nonce}x,s=${rfc.salt.toString('base64')},i=${iterations}`),
          principal: '',
          expiresAtMs: NEVER_EXPIRES,
        });
      });
      await assert.rejects(
        Connection.connect(broker.address, { auth: { user: 'user', password: 'pencil' } }),
        (e: unknown) =>
          e instanceof BrokerUnverifiedError && new RegExp(`${iterations} iterations`).test(e.message),
      );
      assert.equal(broker.received.length, 1, 'no client-final was sent');
    }
  });

  it("a wrong password is AuthenticationFailedError with the broker's reason, never the password", async () => {
    const { broker } = await serve({ users: { alice: 'right-one' } });
    await assert.rejects(
      Connection.connect(broker.address, { auth: { user: 'alice', password: 'wrong-one' } }),
      (e: unknown) => {
        assert.ok(e instanceof AuthenticationFailedError);
        assert.equal(e.code, ErrorCode.AUTHENTICATION_FAILED);
        assert.equal(e.reason, 'wrong user name or password');
        assert.match(
          e.message,
          /AUTHENTICATE SCRAM-SHA-256 as alice refused: authentication failed: wrong user/,
        );
        assert.doesNotMatch(`${e.message} ${e.stack}`, /wrong-one|right-one/);
        return true;
      },
    );
  });

  it("a connection's and a client's options, logged, show no password or fixed token", async () => {
    const { broker } = await serve({
      users: { alice: 'alices-pw' },
      tokens: () => ({ principal: 's', expiresAtMs: -1 }),
    });
    const conn = await Connection.connect(broker.address, { auth: { user: 'alice', password: 'alices-pw' } });
    const client = await Client.connect(broker.address, { auth: { token: 'fixed-token-value' } });
    assert.equal((await client.metadata('t')).length, 1, 'the concealed token still authenticates');
    const redialed = await conn.redial();
    assert.equal(redialed.principal, 'alice', 'the concealed password still authenticates');
    for (const shown of [
      inspect(conn),
      inspect(conn.options),
      JSON.stringify(conn.options),
      inspect(client),
      JSON.stringify(client.options),
    ])
      assert.doesNotMatch(shown, /alices-pw|fixed-token-value/);
    assert.match(inspect(conn.options), /alice/, 'the user name is no secret');
    await redialed.close();
    await client.close();
    await conn.close();
  });

  it('auth options missing a field are refused before dialing, naming the field and not the value', async () => {
    await assert.rejects(
      Connection.connect('127.0.0.1:1', { auth: { user: 'alice', password: '' } }),
      (e: unknown) => e instanceof InvalidArgumentError && /auth\.password/.test(e.message),
    );
    await assert.rejects(
      Connection.connect('127.0.0.1:1', { auth: { user: 'a', password: 'p', token: 't' } as never }),
      (e: unknown) => e instanceof InvalidArgumentError && /not both/.test(e.message),
    );
  });
});

describe('auth: required and refused', () => {
  it('a request before authenticating is AuthenticationRequiredError, and the connection stays open', async () => {
    const { broker } = await serve({ users: { alice: 'pw' } });
    const conn = await Connection.connect(broker.address);
    await assert.rejects(conn.metadata(), (e: unknown) => {
      assert.ok(e instanceof AuthenticationRequiredError);
      assert.equal(e.codeName, 'AUTHENTICATION_REQUIRED');
      assert.match(e.message, /METADATA refused: the broker requires authentication/);
      return true;
    });
    assert.equal(conn.state, 'open');
    await conn.authenticate({ user: 'alice', password: 'pw' });
    assert.equal((await conn.metadata()).length, 1, 'authenticated on the same connection, it is served');
    await conn.close();
  });

  it('NOT_AUTHORIZED is NotAuthorizedError', async () => {
    const broker = await fake(({ request }) =>
      encodeErrorResponse(request.correlationId, ErrorCode.NOT_AUTHORIZED),
    );
    const conn = await Connection.connect(broker.address);
    await assert.rejects(
      conn.listUsers(),
      (e: unknown) => e instanceof NotAuthorizedError && /USERS LIST/.test(e.message),
    );
    await conn.close();
  });
});

describe('auth: tokens', () => {
  const tokens = (token: string) =>
    token.startsWith('tok-')
      ? { principal: `svc-${token.slice(4)}`, expiresAtMs: 4_000_000_000_000 }
      : undefined;

  it('CREDENTIALS_EXPIRED with a provider: a fresh token on the same connection, then the request once more', async () => {
    const { auth, broker } = await serve({ tokens });
    let issued = 0;
    const conn = await Connection.connect(broker.address, { auth: { token: () => `tok-${++issued}` } });
    assert.equal(conn.principal, 'svc-1');
    assert.equal(conn.credentialsExpireAtMs, 4_000_000_000_000);
    auth.expireAll();
    // Two requests refused together share one refresh.
    const [a, b] = await Promise.all([conn.metadata(), conn.metadata('t')]);
    assert.equal(a.length, 1);
    assert.equal(b.length, 1);
    assert.equal(issued, 2, 'one fresh token for both');
    assert.equal(conn.principal, 'svc-2');
    assert.deepEqual(
      auth.attempts.map((x) => x.principal),
      ['svc-1', 'svc-2'],
    );
    const metadataSent = broker.received.filter((r) => r.apiKey === ApiKey.METADATA).length;
    assert.equal(metadataSent, 4, 'each request sent twice: refused, then answered');
    assert.equal(broker.peers.length, 1, 'on the same connection');
    await conn.close();
  });

  it('a PRODUCE with ack NONE (never answered, so never refused as expired) refreshes an ending token first', async () => {
    let issued = 0;
    const { auth, broker } = await serve({
      // The first token is at its end already (the fake takes it all the same); the next lasts.
      tokens: (token) => ({
        principal: token,
        expiresAtMs: token === 'tok-1' ? Date.now() : Date.now() + 3_600_000,
      }),
    });
    const conn = await Connection.connect(broker.address, { auth: { token: () => `tok-${++issued}` } });
    assert.equal(await conn.produce('t', 0, [Buffer.from('x')], { ack: AckPolicy.NONE }), null);
    assert.equal(await conn.produce('t', 0, [Buffer.from('y')], { ack: AckPolicy.NONE }), null);
    await broker.nextArrival(); // AUTHENTICATE tok-1
    await broker.nextArrival(); // AUTHENTICATE tok-2
    const produced = await broker.nextArrival();
    assert.equal(produced.apiKey, ApiKey.PRODUCE, 'the fresh token went before the records');
    assert.equal(issued, 2, 'refreshed once: the fresh token is far from its end');
    assert.deepEqual(
      auth.attempts.map((a) => a.principal),
      ['tok-1', 'tok-2'],
    );
    await conn.close();
  });

  it('CREDENTIALS_EXPIRED with a fixed token reaches the caller as CredentialsExpiredError', async () => {
    const { auth, broker } = await serve({ tokens });
    const conn = await Connection.connect(broker.address, { auth: { token: 'tok-fixed' } });
    auth.expireAll();
    await assert.rejects(conn.metadata(), CredentialsExpiredError);
    assert.equal(auth.attempts.length, 1, 'nothing authenticated again');
    await conn.close();
  });

  it("a refused token is AuthenticationFailedError with the broker's reason, without the token", async () => {
    const { broker } = await serve({ tokens });
    await assert.rejects(
      Connection.connect(broker.address, { auth: { token: 'forged-secret-token' } }),
      (e: unknown) =>
        e instanceof AuthenticationFailedError &&
        e.reason === 'the token is not valid' &&
        !e.message.includes('forged-secret-token'),
    );
  });

  it('a Client authenticates every connection it makes again, after a loss too', async () => {
    const { auth, broker } = await serve({ tokens });
    const client = await Client.connect(broker.address, { auth: { token: 'tok-a' } });
    assert.equal((await client.metadata('t')).length, 1);
    broker.dropConnections();
    // The loss may reach the next request before the pool sees it: a loss is retried, a refusal not.
    let answered: unknown[] | undefined;
    for (let attempt = 0; attempt < 3 && answered === undefined; attempt++) {
      answered = await client.metadata('t').catch((e: unknown) => {
        if (!isConnectionLoss(e)) throw e;
        return undefined;
      });
    }
    assert.equal(answered?.length, 1);
    assert.ok(broker.peers.length >= 2, 'a second connection was made');
    for (const peer of broker.peers) assert.equal(auth.principalOf(peer), 'svc-a', 'each authenticated');
    await client.close();
  });
});

describe('users', () => {
  it('upsert sends salt, iterations and keys, never the password; the user can then log in', async () => {
    const { auth, broker } = await serve({ users: { admin: 'admin-pw' } });
    const conn = await Connection.connect(broker.address, { auth: { user: 'admin', password: 'admin-pw' } });
    const listed = await conn.upsertUser('bob', 'bobs-secret');
    assert.deepEqual(listed, [
      { name: 'admin', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
      { name: 'bob', mechanism: 'SCRAM-SHA-256', iterations: 4096 },
    ]);
    const sent = broker.received.find((r) => r.apiKey === ApiKey.USERS)!;
    const body = sent.body as { credential: { salt: Buffer; storedKey: Buffer } };
    assert.equal(body.credential.salt.length, 16);
    assert.ok(frames.length > 0);
    for (const frame of frames) assert.equal(frame.includes('bobs-secret'), false, 'the password was sent');
    const again = await conn.upsertUser('bob', 'bobs-secret');
    assert.notDeepEqual(
      (broker.received.filter((r) => r.apiKey === ApiKey.USERS).at(-1)!.body as typeof body).credential.salt,
      body.credential.salt,
      'a fresh random salt each time',
    );
    assert.equal(again.length, 2);
    const bob = await Connection.connect(broker.address, { auth: { user: 'bob', password: 'bobs-secret' } });
    assert.equal(bob.principal, 'bob');
    assert.deepEqual(
      (await conn.removeUser('bob')).map((u) => u.name),
      ['admin'],
    );
    assert.equal(auth.credentials.has('bob'), false);
    await assert.rejects(conn.upsertUser('carol', 'pw', { iterations: 1000 }), InvalidArgumentError);
    await assert.rejects(
      conn.upsertUser('', 'pw'),
      (e: unknown) => e instanceof InvalidArgumentError && /name/.test(e.message),
    );
    await bob.close();
    await conn.close();
  });
});
