import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { startEtcd } from '@booblik/cluster/testing';
import { AckPolicy, ErrorCode, topicSpecWithDefaults } from '@booblik/protocol';
import { s3ServerForSuite } from '@booblik/store/test-support/s3-server';
import { startProcess, tempDir } from '@booblik/testkit';
import { moduleLog, moduleLogEnv } from './test-support/module-log.js';
import { produced, RawClient } from './test-support/raw-client.js';

/** The packages a broker loads only when it is in a cluster (etcd's client) or has an s3:// store. */
const ETCD_CLIENT = ['etcd3', 'cockatiel'];
const AWS_SDK = '@aws-sdk/client-s3';
/** Loaded at the first scrape of /metrics. */
const PROM_CLIENT = 'prom-client';

/** A broker process whose module loads are logged; resolves once it listens. */
async function loggedBroker(t: TestContext, args: string[], env: Record<string, string> = {}) {
  const dir = tempDir(t);
  const log = path.join(dir, 'modules.log');
  const p = startProcess(
    [
      `--data.dir=${path.join(dir, 'data')}`,
      '--port=0',
      '--http.port=0',
      '--metrics.interval.millis=0',
      ...args,
    ],
    { ...env, ...moduleLogEnv(log) },
  );
  t.after(() => p.proc.kill('SIGKILL'));
  const port = await p.listening;
  const client = await RawClient.connect(port);
  t.after(() => client.close());
  const loaded = () => {
    const l = moduleLog(log);
    // The hook itself must have worked, or every "not loaded" below would pass for nothing.
    assert.ok(
      l.urls.some((u) => u.endsWith('/broker/dist/broker.js')),
      `the module log names the broker:\n${l.urls.join('\n')}`,
    );
    return l.packages;
  };
  return { client, loaded, httpPort: p.httpPort() };
}

async function createTopic(client: RawClient, name: string, storeUrl: string): Promise<void> {
  const answer = await client.apply([
    { op: 'upsert', spec: { ...topicSpecWithDefaults({ name, partitions: 1 }), storeUrl } },
  ]);
  assert.equal(answer.errorCode, ErrorCode.NONE, answer.body.toString());
}

describe('startup: what the broker loads', () => {
  it('a single node serving (a file:// store too) loads neither the etcd client nor the AWS SDK, nor the Prometheus client before a scrape', async (t) => {
    const { client, loaded } = await loggedBroker(t, ['--topics=t:1']);
    await createTopic(client, 'archived', `file://${tempDir(t)}`);
    for (const topic of ['t', 'archived']) {
      const answer = await client.produce({
        topic,
        partition: 0,
        ack: AckPolicy.WRITTEN,
        records: [Buffer.from('x')],
      });
      assert.equal(answer.errorCode, ErrorCode.NONE, `produce to ${topic}`);
      assert.equal(produced(answer).baseOffset, 0);
    }
    const packages = loaded();
    for (const name of [...ETCD_CLIENT, AWS_SDK, PROM_CLIENT]) {
      assert.ok(!packages.has(name), `${name} was loaded: ${[...packages].join(', ')}`);
    }
  });

  it('the Prometheus client is loaded at the first scrape of /metrics, which then answers in full', async (t) => {
    const { loaded, httpPort } = await loggedBroker(t, ['--topics=t:1']);
    assert.ok(!loaded().has(PROM_CLIENT), 'prom-client was loaded before any scrape');
    for (let scrape = 1; scrape <= 2; scrape++) {
      const answer = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
      assert.equal(answer.status, 200, `scrape ${scrape}`);
      assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await answer.text();
      for (const name of [
        'booblik_records_in_total',
        'booblik_store_uploads_total',
        'booblik_process_process_cpu_seconds_total',
      ]) {
        assert.ok(text.includes(name), `scrape ${scrape} has ${name}`);
      }
    }
    assert.ok(loaded().has(PROM_CLIENT), 'prom-client was not loaded by the scrape');
  });

  describe('with an s3:// store', () => {
    const s3 = s3ServerForSuite();
    it('a topic with an s3:// store loads the AWS SDK, and still not the etcd client', async (t) => {
      const server = s3();
      const { client, loaded } = await loggedBroker(t, ['--topics=t:1'], server.env);
      assert.ok(!loaded().has(AWS_SDK), 'the AWS SDK was loaded before any topic had an s3:// store');
      // Its partition opens (the store's history asked for) before the APPLY is answered.
      await createTopic(client, 'archived', server.url(`startup-modules-${process.hrtime.bigint()}/`));
      const packages = loaded();
      assert.ok(packages.has(AWS_SDK), `the AWS SDK was not loaded: ${[...packages].join(', ')}`);
      for (const name of ETCD_CLIENT) assert.ok(!packages.has(name), `${name} was loaded`);
    });
  });

  it('a cluster member loads the etcd client, and not the AWS SDK', async (t) => {
    const etcd = await startEtcd();
    t.after(() => etcd.cleanup());
    const { loaded } = await loggedBroker(t, [
      `--cluster.etcd=${etcd.endpoint}`,
      `--cluster.name=modules${process.pid}`,
      '--broker.id=b1',
    ]);
    const packages = loaded();
    for (const name of ETCD_CLIENT) {
      assert.ok(packages.has(name), `${name} was not loaded: ${[...packages].join(', ')}`);
    }
    assert.ok(!packages.has(AWS_SDK), 'the AWS SDK was loaded');
  });
});
