import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import {
  type AppendBatch,
  defaultLogConfig,
  type LogConfig,
  Partition,
  scanStoredRecords,
  silentLogger,
} from '@booblik/log';
import { AckPolicy } from '@booblik/protocol';
import { type ObjectStore, openStore } from '@booblik/store';
import { tempDir, waitUntil } from '@booblik/testkit';
import { FragmentCache, StoreFragmentSource } from './fragment-cache.js';
import { PartitionPersister, type PersisterStats } from './partition-persister.js';
import { StoreHealth } from './store-health.js';

/** Nothing else asks this persister for a pass: without the follow-up, the second upload never comes. */
const UPLOAD_WAIT_MS = 10_000;

/** One record as a PRODUCE carries it: `int32 size, payload`. */
function oneRecord(bytes: number, fill = 0x61): AppendBatch {
  const records = Buffer.alloc(4 + bytes, fill);
  records.writeInt32BE(bytes, 0);
  return { records, count: 1 };
}

/** A store whose first putFile waits until `release()`: an upload that is still running. */
function holdingFirstUpload(inner: ObjectStore) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started!: () => void;
  const firstStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  let uploads = 0;
  const store: ObjectStore = {
    url: inner.url,
    put: (key, body, options) => inner.put(key, body, options),
    putFile: async (key, file, options) => {
      if (uploads++ === 0) {
        started();
        await released;
      }
      return inner.putFile(key, file, options);
    },
    get: (key, start, end) => inner.get(key, start, end),
    head: (key) => inner.head(key),
    list: (prefix) => inner.list(prefix),
    delete: (key) => inner.delete(key),
    close: () => inner.close(),
  };
  return { store, firstStarted, release };
}

describe('partition persister', () => {
  it('a segment that closed during an upload is uploaded right after it, without another check', async (t) => {
    const { partition } = Partition.open(tempDir(t, 'persist-data'), 'orders', 0, {
      ...defaultLogConfig,
      segmentBytesMax: 4096,
    });
    const held = holdingFirstUpload(await openStore(`file://${tempDir(t, 'persist-store')}`));
    const stats: PersisterStats = {
      uploads: 0,
      uploadedBytes: 0,
      storeRequests: 0,
      failures: 0,
      deletions: 0,
    };
    const persister = new PartitionPersister(
      partition,
      held.store,
      new StoreHealth(silentLogger),
      stats,
      silentLogger,
      undefined,
    );
    t.after(async () => {
      await persister.close();
      await partition.close();
    });
    const closeSegments = async (count: number) => {
      while (partition.persistCandidates().length < count) {
        await partition.append(oneRecord(1000), AckPolicy.WRITTEN);
      }
    };

    await closeSegments(1);
    persister.kick(); // the only check this test makes
    await held.firstStarted;
    await closeSegments(2); // the first is still uploading
    held.release();
    await waitUntil(() => stats.uploads === 2, 'both segments uploaded', UPLOAD_WAIT_MS);
    assert.equal(partition.persistCandidates().length, 0);
  });
  describe('as a replica (its primary uploads)', () => {
    const SEGMENT_BYTES = 4096;
    const newStats = (): PersisterStats => ({
      uploads: 0,
      uploadedBytes: 0,
      storeRequests: 0,
      failures: 0,
      deletions: 0,
    });

    /** A primary and a replica of one partition on one store, each with its persister. */
    async function pair(t: TestContext, replicaConfig: Partial<LogConfig>) {
      const store = await openStore(`file://${tempDir(t, 'follow-store')}`);
      const source = new StoreFragmentSource(store, new FragmentCache(1 << 20), false, {
        requests: 0,
        bytes: 0,
        cacheHits: 0,
      });
      const open = (prefix: string, config: Partial<LogConfig>) =>
        Partition.open(
          tempDir(t, prefix),
          'orders',
          0,
          { ...defaultLogConfig, segmentBytesMax: SEGMENT_BYTES, ...config },
          { remote: { source, fragments: [] } },
        ).partition;
      const primary = open('follow-primary', {});
      const replica = open('follow-replica', replicaConfig);
      const primaryStats = newStats();
      const replicaStats = newStats();
      const health = new StoreHealth(silentLogger);
      const uploader = new PartitionPersister(primary, store, health, primaryStats, silentLogger, undefined);
      const follower = new PartitionPersister(
        replica,
        store,
        health,
        replicaStats,
        silentLogger,
        undefined,
        () => false,
      );
      t.after(async () => {
        await uploader.close();
        await follower.close();
        await primary.close();
        await replica.close();
      });
      return { primary, replica, uploader, follower, primaryStats, replicaStats };
    }

    /** Every record from the log start to the high watermark, read as a FETCH would (disk or store). */
    async function records(p: Partition): Promise<string[]> {
      const out: string[] = [];
      for (let offset = p.logStartOffset; offset < p.highWatermark.value; ) {
        const read = await p.read(offset, 1 << 20);
        const bytes = Buffer.concat(read.chunks);
        read.release?.();
        let n = 0;
        scanStoredRecords(bytes, 0, bytes.length, (position, size) => {
          out.push(bytes.subarray(position + 8, position + size).toString('latin1'));
          n++;
        });
        assert.ok(n > 0, `nothing readable at ${offset}`);
        offset += n;
      }
      return out;
    }

    const localBytes = (p: Partition) =>
      p
        .fragmentViews()
        .filter((v) => v.location !== 'store')
        .reduce((sum, v) => sum + v.sizeBytes, 0);

    it('drops local copies of the segments the store holds with the same bytes, down to the local retention, and reads them through the store', async (t) => {
      const { primary, replica, uploader, follower, primaryStats, replicaStats } = await pair(t, {
        localRetentionBytes: 2 * SEGMENT_BYTES,
      });
      for (let i = 0; primary.persistCandidates().length < 6; i++) {
        const fill = 0x61 + (i % 26);
        await primary.append(oneRecord(1000, fill), AckPolicy.WRITTEN);
        await replica.append(oneRecord(1000, fill), AckPolicy.WRITTEN);
      }
      const closed = replica.persistCandidates().length;
      replica.enforceRetention();
      assert.equal(replica.persistCandidates().length, closed, 'nothing dropped before the store holds it');

      uploader.kick();
      await waitUntil(() => primaryStats.uploads === closed, 'the primary uploaded every closed segment');
      follower.kick();
      await waitUntil(() => replica.persistCandidates().length === 0, 'the replica found them in the store');
      assert.equal(replicaStats.uploads, 0, 'a replica uploads nothing');
      replica.enforceRetention();

      assert.ok(
        localBytes(replica) <= 2 * SEGMENT_BYTES,
        `${localBytes(replica)} B left on the replica's disk, local retention ${2 * SEGMENT_BYTES} B`,
      );
      assert.ok(replica.localStartOffset > 0, 'local copies dropped');
      assert.deepEqual(await records(replica), await records(primary), 'the whole history still reads');
    });

    it('keeps a segment whose bytes differ from the store copy, and every segment after it', async (t) => {
      const { primary, replica, uploader, follower, primaryStats } = await pair(t, {
        localRetentionBytes: 0,
      });
      for (let i = 0; primary.persistCandidates().length < 4; i++) {
        await primary.append(oneRecord(1000), AckPolicy.WRITTEN);
        // The same sizes (the same segment boundaries), other bytes in the replica's second segment.
        await replica.append(oneRecord(1000, i >= 4 && i < 8 ? 0x62 : 0x61), AckPolicy.WRITTEN);
      }
      uploader.kick();
      await waitUntil(() => primaryStats.uploads === 4, 'the primary uploaded its closed segments');
      follower.kick();
      // One look marks every segment it can: what it left is what it keeps.
      await waitUntil(() => replica.persistCandidates().length < 4, 'the replica looked at the store');
      replica.enforceRetention();
      const views = replica.fragmentViews();
      assert.deepEqual(
        views.map((v) => v.location),
        ['store', 'local', 'local', 'local', 'local'],
        'only the segment the store holds as it is here was dropped',
      );
      assert.equal(views[1]!.baseOffset, primary.fragmentViews()[1]!.baseOffset, 'the same boundaries');
    });
  });
});
