/**
 * etcd with its own authentication: brokers connect as a user whose role covers the cluster's prefix
 * alone, and serve as usual; a broker with the wrong password does not start, saying so without the
 * password.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startProcess, waitUntil } from '@booblik/testkit';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, createTopic, primaries, produceV1 } from '../test-support/cluster-wire.js';

let kit: ClusterKit;
before(async () => {
  kit = await startClusterKit({ brokers: 2, etcdUser: { name: 'booblik', password: 'etcd-secret-pw' } });
});
after(async () => {
  await kit?.cleanup();
});

describe('etcd with authentication', () => {
  it('brokers connecting as an etcd user serve topics, proxied included', async () => {
    const client = await connect(kit.brokers[1]!.address);
    try {
      await createTopic(client, 'etcd-auth', 2);
      await waitUntil(async () => (await primaries(client, 'etcd-auth')).every((p) => p !== ''), 'primaries');
      for (let p = 0; p < 2; p++) assert.equal(await produceV1(client, 'etcd-auth', p, ['x']), 0);
    } finally {
      client.close();
    }
  });

  it('a broker with a wrong etcd password stops at start, naming the user, never the password', async () => {
    const dir = fs.mkdtempSync(path.join(path.dirname(kit.brokers[0]!.dataDir), 'wrong-'));
    const passwordFile = path.join(dir, 'password');
    fs.writeFileSync(passwordFile, 'not-the-password\n');
    const p = startProcess([
      `--data.dir=${path.join(dir, 'data')}`,
      '--port=0',
      '--http.port=-1',
      `--cluster.etcd=${kit.etcd.endpoint}`,
      `--cluster.name=${kit.cluster}`,
      '--cluster.etcd.user=booblik',
      `--cluster.etcd.password.file=${passwordFile}`,
    ]);
    const code = await p.exitCode(30_000);
    assert.notEqual(code, 0);
    const text = p.lines.join('\n');
    assert.match(text, /failed to start: .*auth/i, text);
    assert.ok(!text.includes('not-the-password'), 'the password is not logged');
  });
});

describe('etcd with TLS and client certificates', () => {
  it('brokers reach it over TLS with their client certificate and serve topics', async () => {
    const tlsKit = await startClusterKit({ brokers: 2, etcdTls: true });
    try {
      assert.match(tlsKit.etcd.endpoint, /^https:\/\//);
      const client = await connect(tlsKit.brokers[0]!.address);
      try {
        await createTopic(client, 'etcd-tls', 2);
        // Each partition is served once its broker has it open (an APPLY answers before that).
        await waitUntil(
          async () => (await primaries(client, 'etcd-tls')).every((p) => p !== ''),
          'primaries',
        );
        for (let p = 0; p < 2; p++) assert.equal(await produceV1(client, 'etcd-tls', p, ['x']), 0);
      } finally {
        client.close();
      }
    } finally {
      await tlsKit.cleanup();
    }
  });
});
