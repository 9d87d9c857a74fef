import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import {
  AckPolicy,
  decodeFetchResponse,
  decodeListFragmentsResponse,
  ErrorCode,
  encodeListFragmentsRequest,
  FragmentLocation,
} from '@booblik/protocol';
import { type ObjectStore, openStore } from '@booblik/store';
import { s3ServerForSuite } from '@booblik/store/test-support/s3-server';
import { tempDir, waitUntil } from '@booblik/testkit';
import { produced, type RawClient } from '../test-support/raw-client.js';
import {
  broker,
  createTopic,
  fileKit,
  manifestOf,
  partitionOf,
  persisted,
  produce,
  type StoreKit,
  s3Kit,
  TOPIC,
  UPLOAD_WAIT_MS,
} from '../test-support/store-kit.js';
import { manifestKey } from './object-names.js';

/** The FETCH answer's bytes (records as stored, after the header) at every offset, for two sizes. */
async function answers(client: RawClient, from: number, to: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let offset = from; offset < to; offset++) {
    for (const maxBytes of [100, 5000]) {
      const f = await client.fetch({ topic: TOPIC, partition: 0, fetchOffset: offset, maxBytes });
      assert.equal(f.errorCode, ErrorCode.NONE, `offset ${offset}`);
      const r = decodeFetchResponse(f.body);
      out.set(`${offset}/${maxBytes}`, Buffer.from(r.payload).toString('hex'));
    }
  }
  return out;
}

async function objectKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(`${TOPIC}/0/`)) keys.push(o.key);
  return keys;
}

/** The manifest lists exactly the fragment objects, contiguous, none twice. */
async function assertManifestAgrees(store: ObjectStore): Promise<void> {
  const manifest = await manifestOf(store);
  const fragments = (await objectKeys(store)).filter((k) => k.endsWith('.log') || k.endsWith('.log.gz'));
  assert.deepEqual(
    manifest.fragments.map((f) => f.key).sort(),
    fragments.map((k) => k.replace(/\.gz$/, '')).sort(),
    'the manifest lists every object, and only those',
  );
  for (let i = 1; i < manifest.fragments.length; i++) {
    assert.equal(manifest.fragments[i]!.baseOffset, manifest.fragments[i - 1]!.endOffset, 'contiguous');
  }
}

function storeSuite(name: string, kitOf: (t: TestContext) => Promise<StoreKit>) {
  describe(`fragment stores: ${name}`, () => {
    it('upload after roll: each closed segment once, named by offsets and checksum, in the manifest', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t);
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 300);
      await persisted(b);
      const views = partitionOf(b).fragmentViews();
      const closed = views.filter((v) => v.location === 'both');
      assert.equal(views.at(-1)!.location, 'local', 'the active segment is not uploaded');
      const keys = (await objectKeys(kit.store)).filter((k) => k.endsWith('.log'));
      assert.equal(keys.length, closed.length, 'one object per closed segment');
      for (const [i, v] of closed.entries()) {
        assert.match(
          keys[i]!,
          new RegExp(
            `^${TOPIC}/0/${String(v.baseOffset).padStart(20, '0')}-${String(v.endOffset - 1).padStart(20, '0')}-[0-9a-f]{16}\\.log$`,
          ),
        );
        const object = await kit.store.get(keys[i]!);
        const local = fs.readFileSync(
          path.join(b.dataDir, `${TOPIC}-0`, `${String(v.baseOffset).padStart(20, '0')}.log`),
        );
        assert.ok(object.equals(local), `${keys[i]} holds the segment's bytes as on disk`);
      }
      await assertManifestAgrees(kit.store);

      const id = b.client.id();
      b.client.send(encodeListFragmentsRequest(id, { topic: TOPIC, partition: -1 }));
      const listed = await b.client.expect(id);
      assert.equal(listed.errorCode, ErrorCode.NONE);
      const [only] = decodeListFragmentsResponse(listed.body);
      assert.equal(only!.partition, 0);
      assert.deepEqual(
        only!.fragments.map((f) => [f.baseOffset, f.endOffset, f.sizeBytes, f.location]),
        views.map((v) => [
          v.baseOffset,
          v.endOffset,
          v.sizeBytes,
          v.location === 'both' ? FragmentLocation.BOTH : FragmentLocation.LOCAL,
        ]),
        'LIST_FRAGMENTS shows each segment and where it is',
      );
      assert.ok(only!.fragments.slice(0, -1).every((f) => f.persistedMs > 0));
      assert.equal(only!.fragments.at(-1)!.persistedMs, -1);
    });

    it('local retention drops only persisted copies; reads through the store give the same bytes from every offset', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t, { localRetentionBytes: 0 });
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 200);
      const end = partitionOf(b).highWatermark.value;
      const local = await answers(b.client, 0, end);
      await kit.breakIt();
      b.broker.partitions.enforceRetention();
      assert.equal(partitionOf(b).localStartOffset, 0, 'nothing persisted yet (store down): nothing dropped');
      await kit.restore();
      await persisted(b);
      b.broker.partitions.enforceRetention();
      const p = partitionOf(b);
      assert.ok(p.localStartOffset > 0, 'persisted copies dropped locally');
      assert.equal(p.logStartOffset, 0);
      for (const v of p.fragmentViews()) {
        assert.equal(
          v.location === 'store',
          v.endOffset <= p.localStartOffset,
          `${v.baseOffset}: ${v.location}`,
        );
      }
      assert.deepEqual(await answers(b.client, 0, end), local);
      assert.ok(b.broker.persister.readStats.requests > 0, 'old offsets were read from the store');
    });

    it('store retention deletes expired objects and the manifest agrees', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t);
      await createTopic(b.client, kit.url, { retentionBytes: 6000 });
      await produce(b.client, 0, 300);
      await persisted(b);
      const before = (await manifestOf(kit.store)).fragments.length;
      b.broker.partitions.enforceRetention();
      const start = partitionOf(b).logStartOffset;
      assert.ok(start > 0, 'retention moved the log start');
      await waitUntil(
        () => b.broker.persister.stats.deletions > 0,
        'expired objects deleted',
        UPLOAD_WAIT_MS,
      );
      await waitUntil(
        () => partitionOf(b).takeExpiredFragments().length === 0,
        'deletions handed over',
        1000,
      );
      await b.broker.persister.persisterOf(partitionOf(b))!.close(); // the pass under way ends
      const manifest = await manifestOf(kit.store);
      assert.ok(manifest.fragments.length < before);
      assert.ok(
        manifest.fragments.every((f) => f.baseOffset >= start),
        'nothing expired is listed',
      );
      await assertManifestAgrees(kit.store);
    });

    it('a data directory deleted while the broker is down: history restored, offsets continue', async (t) => {
      const kit = await kitOf(t);
      const dataDir = tempDir(t, 'data');
      const first = await broker(t, { dataDir });
      await createTopic(first.client, kit.url);
      await produce(first.client, 0, 300);
      await persisted(first);
      const storeEnd = partitionOf(first)
        .fragmentViews()
        .filter((v) => v.location === 'both')
        .at(-1)!.endOffset;
      const history = await answers(first.client, 0, storeEnd);
      await first.broker.close();
      fs.rmSync(path.join(dataDir, `${TOPIC}-0`), { recursive: true });

      const second = await broker(t, { dataDir });
      const p = partitionOf(second);
      assert.equal(p.logStartOffset, 0);
      assert.equal(p.highWatermark.value, storeEnd, 'offsets continue where the store ends');
      await produce(second.client, storeEnd, 1);
      assert.equal(p.highWatermark.value, storeEnd + 1);
      assert.deepEqual(await answers(second.client, 0, storeEnd), history);
    });

    it('the store stopped mid-upload and restarted: no loss, no duplicate, no torn manifest; produce never stalled', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t);
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 100);
      await persisted(b);
      const stats = b.broker.persister.stats;
      const uploadsBefore = stats.uploads;
      const producing = produce(b.client, 100, 300);
      await waitUntil(
        () => stats.uploads > uploadsBefore,
        'uploads of the new segments under way',
        UPLOAD_WAIT_MS,
      );
      await kit.breakIt(); // while segments roll and upload
      await producing; // every batch answered while the store is down
      // Segments that close while the store is away (uploads follow each other at once, so those of
      // the batches before may all have landed already): their passes fail until it is back.
      await produce(b.client, 400, 100);
      await waitUntil(() => stats.failures >= 3, 'three failed passes, retried with backoff', UPLOAD_WAIT_MS);
      assert.equal(b.broker.persister.health.failingCount, 1);
      assert.match(b.broker.persister.detail().join('\n'), /failing since/);
      assert.equal(b.lines.filter((l) => /store .*: failing/.test(l)).length, 1, 'one line for the change');
      await produce(b.client, 500, 100);
      await kit.restore();
      await persisted(b);
      await waitUntil(
        () => b.broker.persister.health.failingCount === 0,
        'the store recovered',
        UPLOAD_WAIT_MS,
      );
      assert.ok(b.lines.some((l) => /recovered after/.test(l)));
      await assertManifestAgrees(kit.store);
      const manifest = await manifestOf(kit.store);
      const closed = partitionOf(b)
        .fragmentViews()
        .filter((v) => v.location === 'both');
      assert.deepEqual(
        manifest.fragments.map((f) => [f.baseOffset, f.endOffset]),
        closed.map((v) => [v.baseOffset, v.endOffset]),
      );
    });

    it('a plain delete leaves the objects in the store; the topic created again continues that history, and says so', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t);
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 300);
      await persisted(b);
      const storeEnd = partitionOf(b)
        .fragmentViews()
        .filter((v) => v.location === 'both')
        .at(-1)!.endOffset;
      const history = await answers(b.client, 0, storeEnd);
      const keys = await objectKeys(kit.store);
      const deleted = await b.client.apply([{ op: 'delete', name: TOPIC, expectedRevision: -1 }]);
      assert.equal(deleted.errorCode, ErrorCode.NONE);
      await waitUntil(() => !fs.existsSync(path.join(b.dataDir, `${TOPIC}-0`)), 'the partition removed here');
      assert.deepEqual(await objectKeys(kit.store), keys, 'every object is still in the store');

      await createTopic(b.client, kit.url);
      assert.equal(partitionOf(b).highWatermark.value, storeEnd, 'it continues where the history ends');
      assert.deepEqual(await answers(b.client, 0, storeEnd), history, 'the old records, from the store');
      assert.ok(
        b.lines.some((l) =>
          new RegExp(
            `WARN ${TOPIC}-0: created over the history an earlier topic .* at offset ${storeEnd}`,
          ).test(l),
        ),
        'the broker says the new topic took up an old history',
      );
    });

    it('a delete purging the store: a dry run removes nothing; then every object goes, in one line, and the topic created again starts empty', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t);
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 300);
      await persisted(b);
      const keys = await objectKeys(kit.store);
      assert.ok(keys.length > 1);
      const purge = { op: 'delete' as const, name: TOPIC, expectedRevision: -1, purgeStore: true };

      assert.equal((await b.client.apply([purge], true)).errorCode, ErrorCode.NONE);
      assert.ok(partitionOf(b), 'the dry run deleted nothing');
      assert.deepEqual(await objectKeys(kit.store), keys, 'the dry run removed nothing from the store');

      assert.equal((await b.client.apply([purge])).errorCode, ErrorCode.NONE);
      await waitUntil(
        () => b.lines.some((l) => l.includes(`topic ${TOPIC}: deleted with its store history`)),
        'the purge logged',
        UPLOAD_WAIT_MS,
      );
      assert.deepEqual(await objectKeys(kit.store), [], 'no object of the topic is left');
      const line = b.lines.find((l) => l.includes(`topic ${TOPIC}: deleted with its store history`))!;
      assert.match(
        line,
        new RegExp(`^INFO .*: ${keys.length} object\\(s\\) of 1 partition\\(s\\) removed from store `),
      );
      assert.ok(line.includes(kit.store.url), `the line names the store: ${line}`);

      await createTopic(b.client, kit.url);
      const first = await b.client.produce({
        topic: TOPIC,
        partition: 0,
        ack: AckPolicy.WRITTEN,
        records: [Buffer.from('new')],
      });
      assert.equal(
        produced(first).baseOffset,
        0,
        'the new topic starts at offset 0, not after the old history',
      );
    });

    it('a failing store is reported while a topic uses it, and forgotten once its last topic is deleted', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t);
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 100);
      await persisted(b);
      await kit.breakIt();
      try {
        await produce(b.client, 100, 100); // segments close, their uploads fail
        await waitUntil(
          () => b.broker.persister.health.failingCount === 1,
          'the store reported failing',
          UPLOAD_WAIT_MS,
        );
        assert.match(b.broker.persister.detail().join('\n'), /^store .*: failing since/);
        const deleted = await b.client.apply([{ op: 'delete', name: TOPIC, expectedRevision: -1 }]);
        assert.equal(deleted.errorCode, ErrorCode.NONE);
        await waitUntil(
          () => b.broker.persister.health.failingCount === 0,
          'booblik_store_failing back to 0',
          UPLOAD_WAIT_MS,
        );
        assert.deepEqual(b.broker.persister.detail(), [], '/readyz no longer lists the store');
      } finally {
        await kit.restore();
      }
    });

    it('a flipped byte in a stored object is detected by its CRC and never served', async (t) => {
      const kit = await kitOf(t);
      const b = await broker(t, { localRetentionBytes: 0 });
      await createTopic(b.client, kit.url);
      await produce(b.client, 0, 100);
      await persisted(b);
      b.broker.partitions.enforceRetention();
      const [first] = (await manifestOf(kit.store)).fragments;
      const object = await kit.store.get(first!.key);
      object[object.length - 2]! ^= 0x10;
      await kit.store.put(first!.key, object);
      const f = await b.client.fetch({ topic: TOPIC, partition: 0, fetchOffset: first!.endOffset - 1 });
      assert.equal(f.errorCode, ErrorCode.STORAGE_ERROR, 'refused, not served');
    });

    it('a manifest deleted is rebuilt from a listing', async (t) => {
      const kit = await kitOf(t);
      const dataDir = tempDir(t, 'data');
      const first = await broker(t, { dataDir });
      await createTopic(first.client, kit.url, { labels: { compression: 'gzip' } });
      await produce(first.client, 0, 200);
      await persisted(first);
      const history = await answers(first.client, 0, partitionOf(first).localStartOffset + 1);
      const end = partitionOf(first)
        .fragmentViews()
        .filter((v) => v.location === 'both')
        .at(-1)!.endOffset;
      const storeAnswers = await answers(first.client, 0, end);
      await first.broker.close();
      const gz = await openStore(kit.url, { compression: 'gzip' });
      const original = await manifestOf(gz);
      await gz.delete(manifestKey(TOPIC, 0));
      fs.rmSync(path.join(dataDir, `${TOPIC}-0`), { recursive: true });

      const second = await broker(t, { dataDir });
      assert.equal(partitionOf(second).highWatermark.value, end);
      assert.deepEqual(
        (await manifestOf(gz)).fragments.map((f) => f.key),
        original.fragments.map((f) => f.key),
        'the rebuilt manifest lists the same fragments',
      );
      assert.deepEqual(await answers(second.client, 0, end), storeAnswers);
      assert.ok(history.size > 0);
      assert.ok(second.lines.some((l) => /rebuilt from a listing/.test(l)));
    });
  });
}

storeSuite('file://', fileKit);
describe('s3:// (the real gateway the kit starts)', () => {
  storeSuite('s3://', s3Kit(s3ServerForSuite()));
});
