import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { describe, it } from 'node:test';
import { makeCertificates, type TestCertificates } from '@booblik/testkit';
import { startBroker } from '../test-support/start-broker.js';

interface Answer {
  status: number;
  body: string;
}

function get(url: string, certs: TestCertificates): Promise<Answer> {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const request = mod.get(url, { ca: fs.readFileSync(certs.ca), timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url}: no answer in 10 s`)));
    request.on('error', reject);
  });
}

describe('tls on the HTTP port', () => {
  it('allowed: /healthz answers over HTTP and HTTPS on the same port', async (t) => {
    const certs = await makeCertificates(t);
    const { broker } = await startBroker(t, {
      tls: 'allowed',
      tlsCertFile: certs.server.cert,
      tlsKeyFile: certs.server.key,
      httpPort: 0,
    });
    const port = broker.httpAddress!.port;
    assert.deepEqual(await get(`http://127.0.0.1:${port}/healthz`, certs), { status: 200, body: 'ok\n' });
    assert.deepEqual(await get(`https://127.0.0.1:${port}/healthz`, certs), { status: 200, body: 'ok\n' });
  });

  it('required: plain HTTP is told to use HTTPS, and HTTPS is served', async (t) => {
    const certs = await makeCertificates(t);
    const { broker } = await startBroker(t, {
      tls: 'required',
      tlsCertFile: certs.server.cert,
      tlsKeyFile: certs.server.key,
      httpPort: 0,
    });
    const port = broker.httpAddress!.port;
    const plain = await get(`http://127.0.0.1:${port}/healthz`, certs);
    assert.equal(plain.status, 400);
    assert.match(plain.body, /this port requires HTTPS/);
    assert.equal((await get(`https://localhost:${port}/healthz`, certs)).status, 200);
  });

  it('an expired broker certificate fails /readyz with a line saying so, and /metrics shows the expiry', async (t) => {
    const certs = await makeCertificates(t);
    const { broker } = await startBroker(t, {
      tls: 'allowed',
      tlsCertFile: certs.expired.cert,
      tlsKeyFile: certs.expired.key,
      tlsCaFile: certs.ca,
      tlsClientAuth: 'requested',
      httpPort: 0,
    });
    const port = broker.httpAddress!.port;
    const ready = await get(`http://127.0.0.1:${port}/readyz`, certs);
    assert.equal(ready.status, 503);
    assert.match(ready.body, /^not ready\ntls: the broker's certificate in .*expired\.pem expired at /);
    const metrics = (await get(`http://127.0.0.1:${port}/metrics`, certs)).body;
    const expiry = (file: string) =>
      Number(
        new RegExp(`booblik_tls_certificate_expiry_timestamp_seconds\\{file="${file}"\\} (\\d+)`).exec(
          metrics,
        )?.[1],
      );
    assert.equal(expiry('cert'), Math.floor(broker.tlsService!.watch.certExpiresAtMs / 1000));
    assert.ok(expiry('ca') > Date.now() / 1000, 'the CA is still valid');
  });
});
