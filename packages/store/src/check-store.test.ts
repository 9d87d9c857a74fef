import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { checkStore, withoutSecrets } from './check-store.js';
import { StoreRefusedError, StoreUnavailableError, StoreUrlError } from './errors.js';
import { s3ServerForSuite, s3TestsSkipped, TEST_CREDENTIALS } from './test-support/s3-server.js';

/** A TCP server on loopback that takes connections and never answers (a store hung mid-request). */
async function blackHole(t: TestContext): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as net.AddressInfo).port;
}

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const refused = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof StoreRefusedError, `got ${error}`);
  assert.match(error.message, pattern);
  return true;
};

describe('checking a store before use', () => {
  it('file://: a directory that is missing, a file, or not writable is refused, saying which', async (t) => {
    const root = tempDir(t, 'check');
    await checkStore(`file://${root}`);
    await assert.rejects(
      checkStore(`file://${root}/no/such/dir`),
      refused(/the directory .*\/no\/such\/dir does not exist \(.*create or mount it\)/),
    );
    fs.writeFileSync(path.join(root, 'a-file'), 'x');
    await assert.rejects(checkStore(`file://${root}/a-file`), refused(/a-file is not a directory/));
    await assert.rejects(checkStore('file://host/x'), StoreUrlError);
  });

  it('file://: a directory this process may not write to is refused', {
    skip: process.getuid?.() === 0 ? 'root may write anywhere' : false,
  }, async (t) => {
    const root = tempDir(t, 'check');
    fs.chmodSync(root, 0o500);
    t.after(() => fs.chmodSync(root, 0o700));
    await assert.rejects(checkStore(`file://${root}`), refused(/is not writable by this process/));
  });

  it('s3://: an endpoint that refuses connections is unavailable, one that never answers too, within the timeout', async (t) => {
    const down = `s3://bucket/p?endpoint=http://127.0.0.1:${await closedPort()}&region=us-east-1`;
    await assert.rejects(checkStore(down, { s3: { credentials: TEST_CREDENTIALS } }), StoreUnavailableError);
    const hung = `s3://bucket/p?endpoint=http://127.0.0.1:${await blackHole(t)}&region=us-east-1`;
    const started = performance.now();
    await assert.rejects(
      checkStore(hung, { timeoutMs: 300, s3: { credentials: TEST_CREDENTIALS } }),
      (error: unknown) =>
        error instanceof StoreUnavailableError && /no answer within 300 ms/.test(error.message),
    );
    // Bounded by the check's own timeout, not the SDK's 30 s socket silence.
    assert.ok(performance.now() - started < 5000, `answered in ${performance.now() - started} ms`);
  });

  it("the environment's secrets are cut out of an error's message", () => {
    const env = {
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI',
      AWS_REGION: 'us-east-1',
      AWS_SESSION_TOKEN: 'IQoJb3JpZ2lu',
    };
    const scrubbed = withoutSecrets(
      new StoreRefusedError(
        's3://b/',
        'list',
        'p/',
        'denied for wJalrXUtnFEMI with IQoJb3JpZ2lu in us-east-1',
      ),
      env,
    );
    assert.ok(scrubbed instanceof StoreRefusedError);
    assert.equal(scrubbed.message, 's3://b/: list "p/": denied for [redacted] with [redacted] in us-east-1');
  });
});

describe('checking an S3 store on a real server (versitygw)', { skip: s3TestsSkipped() ?? false }, () => {
  const server = s3ServerForSuite();

  it('a bucket that exists answers; one that does not, or wrong credentials, is refused without the secret', async () => {
    const s = server();
    await checkStore(s.url('p/'), { s3: { credentials: TEST_CREDENTIALS } });
    const missing = s.url('p/').replace(`s3://${s.bucket}/`, 's3://no-such-bucket-here/');
    await assert.rejects(checkStore(missing, { s3: { credentials: TEST_CREDENTIALS } }), StoreRefusedError);
    const secretAccessKey = 'not-the-secret-but-secret-all-the-same';
    await assert.rejects(
      checkStore(s.url('p/'), { s3: { credentials: { ...TEST_CREDENTIALS, secretAccessKey } } }),
      (error: unknown) => {
        assert.ok(error instanceof StoreRefusedError, `got ${error}`);
        assert.ok(!error.message.includes(secretAccessKey), error.message);
        return true;
      },
    );
  });
});
