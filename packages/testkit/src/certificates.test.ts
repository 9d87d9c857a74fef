import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { makeCertificates } from './certificates.js';

describe('test certificates', () => {
  it('the server certificate is for 127.0.0.1 and localhost, signed by the CA; the wrong ones are wrong', async (t) => {
    const certs = await makeCertificates(t);
    const read = (file: string) => new X509Certificate(fs.readFileSync(file));
    const ca = read(certs.ca);
    const server = read(certs.server.cert);
    assert.ok(server.verify(ca.publicKey), 'signed by the CA');
    assert.equal(server.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(server.checkHost('localhost'), 'localhost');
    assert.ok(Date.parse(read(certs.expired.cert).validTo) < Date.now(), 'expired');
    assert.equal(read(certs.wrongName.cert).checkIP('127.0.0.1'), undefined);
    assert.ok(!read(certs.foreign.cert).verify(ca.publicKey), 'not signed by the CA');
    assert.match(read(certs.client.cert).subject, /CN=alice/);
  });
});
