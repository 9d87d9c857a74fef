import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { ObjectNotFoundError, StoreRefusedError, StoreUnavailableError, StoreUrlError } from './errors.js';
import { openStore } from './open-store.js';
import { storeContract } from './test-support/contract.js';
import { s3ServerForSuite, s3TestsSkipped, TEST_CREDENTIALS } from './test-support/s3-server.js';

const skip = s3TestsSkipped() ?? false;

/** A prefix of its own for each test, so the tests share one server and bucket. */
const freshPrefix = () => `t-${randomBytes(4).toString('hex')}/`;

describe('s3:// against a real S3-compatible server (versitygw)', { skip }, () => {
  const server = s3ServerForSuite();

  storeContract('s3://', (_t, options) =>
    openStore(server().url(freshPrefix()), { ...options, s3: { credentials: TEST_CREDENTIALS } }),
  );

  it('wrong credentials are a refusal, not retriable', async () => {
    const store = await openStore(server().url(freshPrefix()), {
      s3: { credentials: { ...TEST_CREDENTIALS, secretAccessKey: 'not-the-secret' } },
    });
    try {
      for (const call of [
        () => store.put('k', Buffer.from('x')),
        () => store.get('k'),
        () => store.head('k'),
      ]) {
        await assert.rejects(call, (error: unknown) => {
          assert.ok(error instanceof StoreRefusedError, `got ${error}`);
          assert.equal(error.retriable, false);
          return true;
        });
      }
    } finally {
      store.close();
    }
  });

  it('a bucket that does not exist is a refusal naming it, not a missing object', async () => {
    const url = server().url('p/').replace(`s3://${server().bucket}/`, 's3://no-such-bucket/');
    const store = await openStore(url, { s3: { credentials: TEST_CREDENTIALS } });
    try {
      await assert.rejects(store.put('k', Buffer.from('x')), /no-such-bucket.*NoSuchBucket/s);
      await assert.rejects(store.get('k'), StoreRefusedError);
    } finally {
      store.close();
    }
  });

  it('putFile with a SHA-256 the bytes do not have: the server refuses it (retriable), nothing is stored', async (t) => {
    const store = await openStore(server().url(freshPrefix()), {
      s3: { credentials: TEST_CREDENTIALS, maxAttempts: 1 },
    });
    try {
      const file = path.join(tempDir(t, 's3-sha'), 'segment');
      const bytes = randomBytes(3 << 20);
      fs.writeFileSync(file, bytes);
      const other = createHash('sha256').update(bytes.subarray(1)).digest('hex');
      await assert.rejects(store.putFile('seg', file, { sha256: other }), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError, `got ${error}`);
        assert.match(error.message, /BadDigest/);
        return true;
      });
      await assert.rejects(store.head('seg'), ObjectNotFoundError);
      await assert.rejects(store.putFile('seg', file, { sha256: 'not-hex' }), RangeError);
      const own = createHash('sha256').update(bytes).digest('hex');
      await store.putFile('seg', file, { sha256: own });
      assert.ok((await store.get('seg')).equals(bytes));
    } finally {
      store.close();
    }
  });

  it('a gzip view leaves the SHA-256 of the original bytes off the compressed object', async (t) => {
    const store = await openStore(server().url(freshPrefix()), {
      compression: 'gzip',
      s3: { credentials: TEST_CREDENTIALS, maxAttempts: 1 },
    });
    try {
      const file = path.join(tempDir(t, 's3-gzip-sha'), 'segment');
      const bytes = Buffer.from('record\n'.repeat(100_000));
      fs.writeFileSync(file, bytes);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      await store.putFile('seg', file, { sha256 });
      await store.put('small', bytes, { sha256 });
      assert.ok((await store.get('seg')).equals(bytes));
      assert.ok((await store.get('small')).equals(bytes));
    } finally {
      store.close();
    }
  });

  it('a server that accepts the connection and never answers: the call fails retriable, it does not hang', async (t) => {
    const silent = net.createServer(() => {}); // reads nothing, answers nothing
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const held: net.Socket[] = [];
    silent.on('connection', (socket) => held.push(socket));
    t.after(() => {
      for (const s of held) s.destroy();
      silent.close();
    });
    const endpoint = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const store = await openStore(server().url(freshPrefix(), endpoint), {
      s3: { credentials: TEST_CREDENTIALS, maxAttempts: 1, socketSilenceTimeoutMs: 200 },
    });
    try {
      const hung = new Promise((_, reject) => {
        setTimeout(() => reject(new Error('still waiting after 5 s: the call hangs')), 5000).unref();
      });
      await assert.rejects(Promise.race([store.get('k'), hung]), StoreUnavailableError);
    } finally {
      store.close();
    }
  });

  it('objects land under the URL prefix in the bucket, and list shows keys without it', async () => {
    const prefix = freshPrefix();
    const store = await openStore(server().url(`${prefix}deeper`), { s3: { credentials: TEST_CREDENTIALS } });
    try {
      await store.put('k', Buffer.from('x'));
      const plain = await openStore(server().url(''), { s3: { credentials: TEST_CREDENTIALS } });
      assert.equal((await plain.get(`${prefix}deeper/k`)).toString(), 'x');
      plain.close();
      const keys: string[] = [];
      for await (const o of store.list()) keys.push(o.key);
      assert.deepEqual(keys, ['k']);
    } finally {
      store.close();
    }
  });
});

describe('s3:// opening', () => {
  it('without a region in the URL or the environment, opening fails naming region', async () => {
    const saved = { region: process.env['AWS_REGION'], config: process.env['AWS_CONFIG_FILE'] };
    delete process.env['AWS_REGION'];
    process.env['AWS_CONFIG_FILE'] = '/nonexistent/booblik-test-aws-config';
    try {
      await assert.rejects(
        openStore('s3://bucket/p?endpoint=http://127.0.0.1:1'),
        (error: unknown) => error instanceof StoreUrlError && error.field === 'region',
      );
    } finally {
      if (saved.region === undefined) delete process.env['AWS_REGION'];
      else process.env['AWS_REGION'] = saved.region;
      if (saved.config === undefined) delete process.env['AWS_CONFIG_FILE'];
      else process.env['AWS_CONFIG_FILE'] = saved.config;
    }
  });
});
