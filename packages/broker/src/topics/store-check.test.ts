import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { decodeInvalidArgument, ErrorCode, type TopicChange, topicSpecWithDefaults } from '@booblik/protocol';
import { s3ServerForSuite, s3TestsSkipped } from '@booblik/store/test-support/s3-server';
import { startFaultProxy } from '@booblik/testkit';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

/** The wait the issue allows an APPLY on a store that does not answer. */
const ANSWER_WITHIN_MS = 5000;

const create = (name: string, storeUrl: string): TopicChange => ({
  op: 'upsert',
  spec: { ...topicSpecWithDefaults({ name, partitions: 2 }), storeUrl },
});

async function client(t: TestContext) {
  const b = await startBroker(t, { topics: [] });
  const c = await RawClient.connect(b.port);
  t.after(() => c.close());
  return { ...b, c };
}

/** Applies (and dry-runs) `change`; both refused with INVALID_ARGUMENT within the wait; returns the message. */
async function refusedInTime(c: RawClient, change: TopicChange): Promise<string> {
  const messages: string[] = [];
  for (const dryRun of [true, false]) {
    const started = performance.now();
    const answer = await c.apply([change], dryRun);
    const ms = performance.now() - started;
    assert.equal(answer.errorCode, ErrorCode.INVALID_ARGUMENT, answer.body.toString());
    assert.ok(ms < ANSWER_WITHIN_MS, `answered in ${ms.toFixed(0)} ms`);
    messages.push(decodeInvalidArgument(answer.body).message);
  }
  assert.equal(messages[0], messages[1], 'a dry run gives the same answer');
  return messages[0]!;
}

/** Nothing of the refused topic exists: not listed, no partition directory. */
async function nothingCreated(c: RawClient, dataDir: string, name: string): Promise<void> {
  assert.equal((await c.metadata(name)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.deepEqual(
    fs.readdirSync(dataDir).filter((f) => f.startsWith(`${name}-`)),
    [],
  );
}

describe("APPLY checks a new topic's store", () => {
  it('a file:// directory that does not exist is refused with the reason, and nothing is created', async (t) => {
    const { c, dataDir } = await client(t);
    const missing = path.join(
      fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-nostore-')),
      'no',
      'such',
      'dir',
    );
    t.after(() =>
      fs.rmSync(path.dirname(path.dirname(path.dirname(missing))), { recursive: true, force: true }),
    );
    const message = await refusedInTime(c, create('orders', `file://${missing}`));
    assert.match(
      message,
      new RegExp(
        `^changes\\[0\\]\\.storeUrl: "file://${missing}" cannot be used: the directory ${missing} does not exist`,
      ),
    );
    await nothingCreated(c, dataDir, 'orders');
    // Once the directory exists, the same APPLY goes through.
    fs.mkdirSync(missing, { recursive: true });
    assert.equal((await c.apply([create('orders', `file://${missing}`)])).errorCode, ErrorCode.NONE);
  });
});

describe("APPLY checks a new topic's S3 store (versitygw)", { skip: s3TestsSkipped() ?? false }, () => {
  const server = s3ServerForSuite();

  it('an endpoint that is down, or that never answers, is refused within 5 s; no secret in the message', async (t) => {
    const s = server();
    Object.assign(process.env, s.env); // the broker finds its credentials the standard way
    const { c, dataDir } = await client(t);
    const proxy = await startFaultProxy({ target: new URL(s.endpoint).host });
    t.after(() => proxy.close());
    const url = s.url('check/', `http://${proxy.address}`);
    assert.equal(
      (await c.apply([create('reachable', url)], true)).errorCode,
      ErrorCode.NONE,
      'it answers through the proxy',
    );

    proxy.cut(); // the server is down: every connection reset
    const down = await refusedInTime(c, create('down', url));
    assert.match(
      down,
      /^changes\[0\]\.storeUrl: "s3:\/\/.*" does not answer \(.*\); .*try again once it does$/,
    );
    await nothingCreated(c, dataDir, 'down');

    proxy.blackhole(); // connections accepted, never answered
    const hung = await refusedInTime(c, create('hung', url));
    assert.match(hung, /does not answer \(no answer within \d+ ms\)/);
    await nothingCreated(c, dataDir, 'hung');

    for (const message of [down, hung])
      assert.ok(!message.includes(s.env.AWS_SECRET_ACCESS_KEY!), 'no secret');
  });

  it('a bucket that does not exist, or credentials it refuses, are refused naming the store, without the secret', async (t) => {
    const s = server();
    Object.assign(process.env, s.env);
    const { c, dataDir } = await client(t);
    const url = s.url('p/').replace(`s3://${s.bucket}/`, 's3://no-such-bucket-here/');
    const message = await refusedInTime(c, create('nobucket', url));
    assert.match(
      message,
      /^changes\[0\]\.storeUrl: "s3:\/\/no-such-bucket-here\/p\/.*" cannot be used: NoSuchBucket/,
    );
    await nothingCreated(c, dataDir, 'nobucket');

    const secret = 'a-wrong-secret-that-must-not-be-shown';
    process.env['AWS_SECRET_ACCESS_KEY'] = secret;
    t.after(() => Object.assign(process.env, s.env));
    const denied = await refusedInTime(c, create('denied', s.url('p/')));
    assert.match(denied, /cannot be used: SignatureDoesNotMatch/);
    assert.ok(!denied.includes(secret), denied);
    await nothingCreated(c, dataDir, 'denied');
  });
});
