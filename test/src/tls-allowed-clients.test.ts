/**
 * `booblik.tls=allowed` with authentication off changes nothing for plaintext clients: the
 * conformance kit (every registered client: the original Python, TypeScript and Go clients, the
 * contract's checks and the broker checks) passes against a broker that also serves TLS on the same
 * port, and a TLS client is served beside them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Connection } from '@booblik/client';
import { BrokerProcess, makeCertificates } from '@booblik/testkit';
import { runProgram } from './kit/client-programs.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

test('with TLS allowed, every client of the conformance kit passes in plaintext, and a TLS client is served beside them', async (t) => {
  const certs = await makeCertificates(t);
  const broker = await BrokerProcess.start(t, {
    // The topics the conformance kit's own broker gets (conformance/harness/broker_process.py).
    flags: [
      '--topics=conformance:3,single:1',
      '--tls=allowed',
      `--tls.cert.file=${certs.server.cert}`,
      `--tls.key.file=${certs.server.key}`,
    ],
  });
  const address = `${broker.host}:${broker.port}`;
  const kit = await runProgram('python3', [path.join(repoRoot, 'conformance/run.py'), '--broker', address]);
  assert.equal(kit.code, 0, kit.text);
  assert.match(kit.text, /^\d+ passed, 0 failed$/m, kit.text);
  const secure = await Connection.connect(address, { tls: { ca: fs.readFileSync(certs.ca, 'utf8') } });
  try {
    assert.ok((await secure.metadata()).length > 0);
  } finally {
    await secure.close();
  }
});
