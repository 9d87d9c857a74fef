import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { makeCertificates } from '@booblik/testkit';
import { ConfigError } from '../errors.js';
import { startBroker } from '../test-support/start-broker.js';

describe('tls configuration', () => {
  it('tls on without a certificate or key is refused at start, naming the keys', async (t) => {
    await assert.rejects(
      startBroker(t, { tls: 'required' }),
      (e: Error) =>
        e instanceof ConfigError &&
        /booblik.tls=required needs booblik.tls.cert.file and booblik.tls.key.file/.test(e.message),
    );
  });

  it('a key that does not match the certificate is refused at start, naming the key file', async (t) => {
    const certs = await makeCertificates(t);
    await assert.rejects(
      startBroker(t, { tls: 'allowed', tlsCertFile: certs.server.cert, tlsKeyFile: certs.client.key }),
      (e: Error) =>
        e instanceof ConfigError &&
        e.message ===
          `booblik.tls.key.file: ${certs.client.key} does not match the certificate in ${certs.server.cert}`,
    );
  });

  it('an unreadable certificate file and one that is not PEM are refused at start, naming the file', async (t) => {
    const certs = await makeCertificates(t);
    const missing = path.join(certs.dir, 'missing.pem');
    await assert.rejects(
      startBroker(t, { tls: 'allowed', tlsCertFile: missing, tlsKeyFile: certs.server.key }),
      (e: Error) =>
        e instanceof ConfigError && e.message === `booblik.tls.cert.file: ${missing} cannot be read (ENOENT)`,
    );
    const garbage = path.join(certs.dir, 'garbage.pem');
    fs.writeFileSync(garbage, 'not a certificate\n');
    await assert.rejects(
      startBroker(t, {
        tls: 'allowed',
        tlsCertFile: certs.server.cert,
        tlsKeyFile: certs.server.key,
        tlsCaFile: garbage,
      }),
      (e: Error) =>
        e instanceof ConfigError && e.message === `booblik.tls.ca.file: ${garbage} holds no PEM certificate`,
    );
  });

  it('client certificates asked for without a CA file, or with tls off, are refused at start', async (t) => {
    const certs = await makeCertificates(t);
    const files = { tlsCertFile: certs.server.cert, tlsKeyFile: certs.server.key };
    await assert.rejects(
      startBroker(t, { tls: 'required', tlsClientAuth: 'required', ...files }),
      /booblik.tls.client.auth=required needs booblik.tls.ca.file/,
    );
    await assert.rejects(
      startBroker(t, { tlsClientAuth: 'requested', ...files }),
      /booblik.tls.client.auth=requested needs booblik.tls=allowed or required/,
    );
  });

  it('tls in a cluster without a CA file is refused at start: brokers verify each other against it', async (t) => {
    const certs = await makeCertificates(t);
    await assert.rejects(
      startBroker(t, {
        tls: 'required',
        tlsCertFile: certs.server.cert,
        tlsKeyFile: certs.server.key,
        clusterEtcd: ['http://127.0.0.1:1'],
      }),
      (e: Error) => e instanceof ConfigError && /in a cluster needs booblik.tls.ca.file/.test(e.message),
    );
  });

  it('a key in a file does not reach the error text', async (t) => {
    const certs = await makeCertificates(t);
    const key = fs.readFileSync(certs.server.key, 'utf8');
    await assert.rejects(
      startBroker(t, { tls: 'allowed', tlsCertFile: certs.server.key, tlsKeyFile: certs.server.key }),
      (e: Error) => e instanceof ConfigError && !e.message.includes(key.split('\n')[1]!),
    );
  });
});
