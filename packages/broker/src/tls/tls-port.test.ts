import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { ErrorCode } from '@booblik/protocol';
import { makeCertificates, type TestCertificates, waitUntil, within } from '@booblik/testkit';
import type { BrokerConfig } from '../config/keys.js';
import type { Session } from '../session.js';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

async function tlsBroker(t: TestContext, certs: TestCertificates, overrides: Partial<BrokerConfig> = {}) {
  return startBroker(t, {
    tls: 'required',
    tlsCertFile: certs.server.cert,
    tlsKeyFile: certs.server.key,
    ...overrides,
  });
}

const trusting = (certs: TestCertificates) => ({ ca: fs.readFileSync(certs.ca) });

describe('tls on the protocol port', () => {
  it('required: a plaintext request is answered TLS_REQUIRED with its correlationId, then the connection closes', async (t) => {
    const certs = await makeCertificates(t);
    const { port } = await tlsBroker(t, certs);
    const plain = await RawClient.connect(port);
    t.after(() => plain.close());
    const answer = await plain.metadata('t');
    assert.equal(answer.errorCode, ErrorCode.TLS_REQUIRED);
    assert.equal(answer.correlationId, 1);
    assert.equal(answer.body.length, 0, 'no body');
    await within(plain.closedPromise, 5000, 'the broker closing the plaintext connection');
  });

  it('required: a TLS client trusting the CA is served', async (t) => {
    const certs = await makeCertificates(t);
    const { port } = await tlsBroker(t, certs);
    const c = await RawClient.connectTls(port, trusting(certs));
    t.after(() => c.close());
    assert.equal((await c.metadata('t')).errorCode, 0);
  });

  it('allowed: a plaintext client and a TLS client are both served on the same port', async (t) => {
    const certs = await makeCertificates(t);
    const { port } = await tlsBroker(t, certs, { tls: 'allowed' });
    const plain = await RawClient.connect(port);
    const secure = await RawClient.connectTls(port, trusting(certs));
    t.after(() => {
      plain.close();
      secure.close();
    });
    assert.equal((await plain.metadata('t')).errorCode, 0);
    assert.equal((await secure.metadata('t')).errorCode, 0);
  });

  for (const [name, pick, clientError] of [
    ['an expired certificate', (c: TestCertificates) => c.expired, /certificate has expired/],
    [
      'a certificate for another name',
      (c: TestCertificates) => c.wrongName,
      /does not match certificate's altnames/,
    ],
    [
      'a certificate of another CA',
      (c: TestCertificates) => c.foreign,
      /unable to verify the first certificate/,
    ],
  ] as const) {
    it(`${name} on the broker is refused by the client, and the broker logs the failed handshake`, async (t) => {
      const certs = await makeCertificates(t);
      const pair = pick(certs);
      const { port, lines } = await tlsBroker(t, certs, { tlsCertFile: pair.cert, tlsKeyFile: pair.key });
      await assert.rejects(RawClient.connectTls(port, trusting(certs)), clientError);
      await waitUntil(
        () =>
          lines.some((l) =>
            /WARN tls: handshake from .* failed: the client closed the connection during the handshake/.test(
              l,
            ),
          ),
        'the broker logging the refused handshake',
      );
    });
  }

  it('mTLS: a verified client certificate makes its CN the principal the session sees', async (t) => {
    const certs = await makeCertificates(t);
    const { broker, port } = await tlsBroker(t, certs, { tlsCaFile: certs.ca, tlsClientAuth: 'required' });
    const c = await RawClient.connectTls(port, {
      ...trusting(certs),
      cert: fs.readFileSync(certs.client.cert),
      key: fs.readFileSync(certs.client.key),
    });
    t.after(() => c.close());
    assert.equal((await c.metadata('t')).errorCode, 0);
    const sessions = [...(broker as unknown as { sessions: Set<Session> }).sessions];
    assert.deepEqual(
      sessions.map((s) => s.tlsPrincipal),
      ['alice'],
    );
  });

  it('mTLS required: no client certificate, or one of another CA, is refused on both sides', async (t) => {
    const certs = await makeCertificates(t);
    const { port, lines } = await tlsBroker(t, certs, { tlsCaFile: certs.ca, tlsClientAuth: 'required' });
    for (const options of [
      trusting(certs),
      {
        ...trusting(certs),
        cert: fs.readFileSync(certs.foreignClient.cert),
        key: fs.readFileSync(certs.foreignClient.key),
      },
    ]) {
      // TLS 1.3: the client's handshake may finish before the broker has checked its certificate;
      // the refusal then arrives as an alert on the first read.
      const refused = RawClient.connectTls(port, options).then(async (c) => {
        await c.metadata('t');
        throw new Error('served');
      });
      // Without a certificate the broker's TLS says so in an alert; a certificate that does not
      // verify is closed on after the handshake.
      await assert.rejects(refused, /alert certificate required|connection closed before the answer/);
    }
    await waitUntil(
      () => lines.filter((l) => /WARN tls: handshake from .* failed: /.test(l)).length >= 2,
      'both refusals logged',
    );
    assert.ok(
      lines.some((l) => /failed: peer did not return a certificate$/.test(l)),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => /failed: client certificate refused: UNABLE_TO_VERIFY_LEAF_SIGNATURE$/.test(l)),
      lines.join('\n'),
    );
  });

  it('mTLS requested: a client without a certificate is served with no principal', async (t) => {
    const certs = await makeCertificates(t);
    const { broker, port } = await tlsBroker(t, certs, { tlsCaFile: certs.ca, tlsClientAuth: 'requested' });
    const c = await RawClient.connectTls(port, trusting(certs));
    t.after(() => c.close());
    assert.equal((await c.metadata('t')).errorCode, 0);
    const sessions = [...(broker as unknown as { sessions: Set<Session> }).sessions];
    assert.deepEqual(
      sessions.map((s) => s.tlsPrincipal),
      [null],
    );
  });

  it('mTLS requested: a client certificate that does not verify is refused, never taken as none', async (t) => {
    const certs = await makeCertificates(t);
    const { port, lines } = await tlsBroker(t, certs, { tlsCaFile: certs.ca, tlsClientAuth: 'requested' });
    const c = await RawClient.connectTls(port, {
      ...trusting(certs),
      cert: fs.readFileSync(certs.foreignClient.cert),
      key: fs.readFileSync(certs.foreignClient.key),
    });
    t.after(() => c.close());
    await within(c.closedPromise, 5000, 'the broker closing the connection');
    assert.ok(
      lines.some((l) =>
        /WARN tls: client certificate from 127\.0\.0\.1:\d+ refused: UNABLE_TO_VERIFY_LEAF_SIGNATURE$/.test(
          l,
        ),
      ),
      lines.join('\n'),
    );
  });

  it('shutdown closes connections still in the gate: one that never sent a byte, one mid-handshake', async (t) => {
    const certs = await makeCertificates(t);
    const { broker, port } = await tlsBroker(t, certs, { tls: 'allowed' });
    const idle = net.connect({ port, host: '127.0.0.1' });
    const handshaking = net.connect({ port, host: '127.0.0.1' });
    for (const s of [idle, handshaking]) s.on('error', () => {});
    await Promise.all([idle, handshaking].map((s) => new Promise((resolve) => s.once('connect', resolve))));
    // The start of a ClientHello, never finished.
    handshaking.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x80]));
    const closed = Promise.all(
      [idle, handshaking].map((s) => new Promise((resolve) => s.once('close', resolve))),
    );
    await within(broker.close(), 5000, 'the broker stopping');
    await within(closed, 5000, 'both connections closed');
  });

  it('a certificate replaced on disk is served to the next connection without a restart', async (t) => {
    const certs = await makeCertificates(t);
    const live = { cert: `${certs.dir}/live.pem`, key: `${certs.dir}/live.key` };
    fs.copyFileSync(certs.server.cert, live.cert);
    fs.copyFileSync(certs.server.key, live.key);
    const { broker, port } = await tlsBroker(t, certs, { tlsCertFile: live.cert, tlsKeyFile: live.key });
    const before = await RawClient.connectTls(port, trusting(certs));
    t.after(() => before.close());
    const serialOf = (c: RawClient) =>
      (c.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber;
    const first = serialOf(before);
    const next = await certs.issue('next', { cn: 'next', altNames: ['IP:127.0.0.1'] });
    const reloaded = new Promise<void>((resolve) => broker.tlsService!.watch.onReload(resolve));
    // Replaced as deploy tools do: the new file renamed over the old, key first.
    fs.copyFileSync(next.key, `${live.key}.new`);
    fs.copyFileSync(next.cert, `${live.cert}.new`);
    fs.renameSync(`${live.key}.new`, live.key);
    fs.renameSync(`${live.cert}.new`, live.cert);
    await within(reloaded, 10_000, 'the broker taking the new certificate');
    const after = await RawClient.connectTls(port, trusting(certs));
    t.after(() => after.close());
    assert.notEqual(serialOf(after), first, 'the next connection gets the new certificate');
    assert.equal((await before.metadata('t')).errorCode, 0, 'the live connection keeps working');
  });
});
