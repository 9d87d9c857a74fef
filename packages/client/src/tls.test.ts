import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import { BrokerProcess, makeCertificates, type TestCertificates } from '@booblik/testkit';
import { Client } from './client.js';
import { Connection } from './connection.js';
import { ConnectionClosedError, InvalidArgumentError, TlsError, TlsRequiredError } from './errors.js';

async function tlsBroker(t: TestContext, certs: TestCertificates, flags: string[] = []) {
  return BrokerProcess.start(t, {
    http: false,
    flags: [
      '--topics=t:1',
      '--tls=required',
      `--tls.cert.file=${certs.server.cert}`,
      `--tls.key.file=${certs.server.key}`,
      ...flags,
    ],
  });
}

describe('client over TLS', () => {
  it('records of every size go through a TLS connection intact, in chunks of any split', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs);
    const c = await Connection.connect(broker.address, { tls: { ca: fs.readFileSync(certs.ca) } });
    t.after(() => c.close());
    // From one byte to more than a TLS record (16 KiB) and a read buffer (64 KiB).
    const records = [1, 100, 16_385, 70_000, 300_000].map((n, i) => Buffer.alloc(n, 97 + i));
    assert.equal((await c.produce('t', 0, records))?.baseOffset, 0);
    const fetched = await c.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 1 << 20 });
    assert.deepEqual(
      fetched.records.map((r) => r.payload),
      records,
    );
  });

  it('a plaintext connection to a broker that requires TLS fails with TlsRequiredError saying --tls', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs);
    const c = await Connection.connect(broker.address);
    t.after(() => c.destroy());
    await assert.rejects(
      c.metadata('t'),
      (e: Error) =>
        e instanceof TlsRequiredError &&
        /the broker requires TLS: connect with TLS \(--tls\)/.test(e.message),
    );
  });

  it('TLS to a broker without TLS fails with "is booblik.tls on?"', async (t) => {
    const broker = await BrokerProcess.start(t, { http: false });
    await assert.rejects(
      Connection.connect(broker.address, { tls: true, timeoutMs: 10_000 }),
      (e: Error) =>
        e instanceof TlsError && /the broker did not answer TLS: is booblik.tls on\?/.test(e.message),
    );
  });

  it('a broker certificate the client does not trust fails with TlsError naming why', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs);
    await assert.rejects(
      Connection.connect(broker.address, { tls: true }),
      (e: Error) =>
        e instanceof TlsError &&
        /the broker's certificate is not trusted: .*UNABLE_TO_VERIFY_LEAF_SIGNATURE/.test(e.message),
    );
    await assert.rejects(
      Connection.connect(broker.address, {
        tls: { ca: fs.readFileSync(certs.ca), servername: 'elsewhere.example' },
      }),
      (e: Error) => e instanceof TlsError && /ERR_TLS_CERT_ALTNAME_INVALID/.test(e.message),
    );
  });

  it('a Client with a client certificate bootstraps and produces against a broker that requires one', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs, [`--tls.ca.file=${certs.ca}`, '--tls.client.auth=required']);
    const client = await Client.connect(broker.address, {
      tls: {
        ca: fs.readFileSync(certs.ca),
        cert: fs.readFileSync(certs.client.cert),
        key: fs.readFileSync(certs.client.key),
      },
    });
    t.after(() => client.close());
    assert.equal((await client.produce('t', 0, [Buffer.from('x')]))?.baseOffset, 0);
  });

  it("a broker that refuses the client's certificate, or wants one, says so in the connection's error", async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs, [`--tls.ca.file=${certs.ca}`, '--tls.client.auth=required']);
    const ca = fs.readFileSync(certs.ca);
    const without = await Connection.connect(broker.address, { tls: { ca } });
    await assert.rejects(
      without.metadata('t'),
      (e: Error) =>
        e instanceof ConnectionClosedError &&
        /the broker refused this client's certificate \(TLS tlsv13 alert certificate required\)$/.test(
          e.message,
        ),
    );
    const foreign = await Connection.connect(broker.address, {
      tls: {
        ca,
        cert: fs.readFileSync(certs.foreignClient.cert),
        key: fs.readFileSync(certs.foreignClient.key),
      },
    });
    await assert.rejects(
      foreign.metadata('t'),
      (e: Error) =>
        e instanceof ConnectionClosedError && /did it refuse this client's certificate\?/.test(e.message),
    );
  });

  it('a path where PEM contents belong, or a cert without its key, is refused before dialing', async () => {
    await assert.rejects(
      Connection.connect('127.0.0.1:1', { tls: { ca: '/etc/ssl/ca.pem' } }),
      (e: Error) => e instanceof InvalidArgumentError && /tls.ca: not PEM .*not its path/.test(e.message),
    );
    await assert.rejects(
      Connection.connect('127.0.0.1:1', { tls: { cert: '-----BEGIN CERTIFICATE-----' } }),
      (e: Error) => e instanceof InvalidArgumentError && /tls.key: needed with tls.cert/.test(e.message),
    );
  });
});
