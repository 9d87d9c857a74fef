import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { StoreRefusedError, StoreUrlError } from './errors.js';
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
