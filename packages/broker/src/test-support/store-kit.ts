/**
 * The fragment-store tests' kit: a store location (file:// or the S3 gateway the store kit starts)
 * with a way to break it, an in-process broker with tiny segments, and waits on what the persister did.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { TestContext } from 'node:test';
import { AckPolicy, ErrorCode, topicSpecWithDefaults } from '@booblik/protocol';
import { type ObjectStore, openStore } from '@booblik/store';
import { type S3TestServer, TEST_CREDENTIALS } from '@booblik/store/test-support/s3-server';
import { tempDir, waitUntil } from '@booblik/testkit';
import type { BrokerConfig } from '../config/keys.js';
import { manifestKey } from '../persister/object-names.js';
import { RawClient } from './raw-client.js';
import { startBroker, type TestBroker } from './start-broker.js';

export const TOPIC = 'history';
/** Tiny segments: dozens of rolls from a few hundred records. */
export const SETTINGS: Partial<BrokerConfig> = {
  topics: [],
  segmentBytesMax: 2048,
  indexIntervalBytes: 256,
  tailCacheBytes: 0,
  retentionMs: -1,
  retentionCheckMs: 3_600_000, // retention runs when a test calls it
};
export const UPLOAD_WAIT_MS = 30_000;

/** A store location for one test: its URL, a client to look behind the broker, and a way to break it. */
export interface StoreKit {
  url: string;
  store: ObjectStore;
  /** Makes the store refuse every call until `restore`. */
  breakIt(): Promise<void>;
  restore(): Promise<void>;
}

export async function fileKit(t: TestContext): Promise<StoreKit> {
  const root = tempDir(t, 'store');
  const url = `file://${root}`;
  const store = await openStore(url);
  return {
    url,
    store,
    // The store's root is gone (an unmounted disk): every call fails until it is back.
    breakIt: async () => fs.renameSync(root, `${root}.away`),
    restore: async () => fs.renameSync(`${root}.away`, root),
  };
}

export function s3Kit(server: () => S3TestServer) {
  return async (t: TestContext): Promise<StoreKit> => {
    const s = server();
    Object.assign(process.env, s.env); // the broker's store finds its credentials the standard way
    const url = s.url(`${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}-${process.hrtime.bigint()}/`);
    const store = await openStore(url, { s3: { credentials: TEST_CREDENTIALS } });
    t.after(() => store.close());
    return { url, store, breakIt: () => s.stop(), restore: () => s.start() };
  };
}

export async function broker(
  t: TestContext,
  overrides: Partial<BrokerConfig> = {},
): Promise<TestBroker & { client: RawClient }> {
  const b = await startBroker(t, { ...SETTINGS, ...overrides });
  const client = await RawClient.connect(b.port);
  t.after(() => client.close());
  return { ...b, client };
}

export async function createTopic(client: RawClient, storeUrl: string, fields = {}): Promise<void> {
  const answer = await client.apply([
    { op: 'upsert', spec: { ...topicSpecWithDefaults({ name: TOPIC, partitions: 1 }), storeUrl, ...fields } },
  ]);
  assert.equal(answer.errorCode, ErrorCode.NONE, answer.body.toString());
}

/** Records of varied sizes, some longer than the index interval. */
export async function produce(client: RawClient, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 10) {
    const records = Array.from({ length: Math.min(10, from + count - i) }, (_, k) =>
      Buffer.from(`record-${i + k}-${'x'.repeat(((i + k) * 53) % 300)}`),
    );
    const f = await client.produce({ topic: TOPIC, partition: 0, ack: AckPolicy.WRITTEN, records });
    assert.equal(f.errorCode, ErrorCode.NONE, `produce at ${i}`);
  }
}

export function partitionOf(b: TestBroker) {
  const p = b.broker.partitions.localPartition(TOPIC, 0);
  assert.ok(p, 'the partition is served');
  return p;
}

/** Waits until every closed segment is in the store and recorded. */
export async function persisted(b: TestBroker): Promise<void> {
  const p = partitionOf(b);
  await waitUntil(
    () =>
      p.persistCandidates().length === 0 && p.fragmentViews().filter((v) => v.location === 'both').length > 0,
    'every closed segment uploaded',
    UPLOAD_WAIT_MS,
  );
}

export async function manifestOf(store: ObjectStore) {
  return JSON.parse((await store.get(manifestKey(TOPIC, 0))).toString()) as {
    fragments: { key: string; baseOffset: number; endOffset: number }[];
    epochs?: { epoch: number; startOffset: number }[];
    highWatermark?: number;
  };
}
