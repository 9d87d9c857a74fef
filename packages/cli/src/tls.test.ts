import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { BrokerProcess, makeCertificates, type TestCertificates } from '@booblik/testkit';
import { booblik } from './test-support/spawn.js';

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

describe('booblik over TLS', () => {
  it('--tls.ca (given before the verb) reaches a TLS broker; BOOBLIK_TLS_CA does the same', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs);
    const byFlag = await booblik(['--tls.ca', certs.ca, 'metadata', '--broker', broker.address]);
    assert.equal(byFlag.code, 0, byFlag.stderr);
    assert.match(byFlag.stdout.toString(), /^t +0 +0 +0$/m);
    const byEnv = await booblik(['produce', 't', '--broker', broker.address], {
      input: 'a\nb\n',
      env: { BOOBLIK_TLS_CA: certs.ca },
    });
    assert.equal(byEnv.code, 0, byEnv.stderr);
    const read = await booblik(['consume', 't', '--broker', broker.address, '--tls.ca', certs.ca]);
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout.toString(), 'a\nb\n');
  });

  it('without --tls, a broker that requires TLS is exit 1 saying to connect with --tls', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs);
    const run = await booblik(['metadata', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /the broker requires TLS: connect with TLS \(--tls\)/);
  });

  it('--tls to a broker without TLS is exit 1 asking whether booblik.tls is on', async (t) => {
    const broker = await BrokerProcess.start(t, { http: false });
    const run = await booblik(['health', '--tls', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.match(run.stdout.toString(), /^unhealthy: .*the broker did not answer TLS: is booblik.tls on\?/);
  });

  it('--tls.cert and --tls.key present a client certificate; one without the other is a usage error', async (t) => {
    const certs = await makeCertificates(t);
    const broker = await tlsBroker(t, certs, [`--tls.ca.file=${certs.ca}`, '--tls.client.auth=required']);
    const run = await booblik([
      'health',
      '--broker',
      broker.address,
      '--tls.ca',
      certs.ca,
      '--tls.cert',
      certs.client.cert,
      '--tls.key',
      certs.client.key,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const half = await booblik(['health', '--broker', broker.address, '--tls.cert', certs.client.cert]);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /--tls.cert needs --tls.key/);
    const missing = await booblik([
      'health',
      '--broker',
      broker.address,
      '--tls.ca',
      `${certs.dir}/nope.pem`,
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--tls.ca: cannot read .*nope.pem \(ENOENT\)/);
  });
});
