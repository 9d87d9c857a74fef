import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { type AppendBatch, defaultLogConfig, Partition, silentLogger } from '@booblik/log';
import { AckPolicy } from '@booblik/protocol';
import { type ObjectStore, openStore } from '@booblik/store';
import { waitFor } from '../test-support/wait-for.js';
import { PartitionPersister, type PersisterStats } from './partition-persister.js';
import { StoreHealth } from './store-health.js';

/** Nothing else asks this persister for a pass: without the follow-up, the second upload never comes. */
const UPLOAD_WAIT_MS = 10_000;

function tempDir(t: TestContext, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `booblik-${prefix}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One record as a PRODUCE carries it: `int32 size, payload`. */
function oneRecord(bytes: number): AppendBatch {
  const records = Buffer.alloc(4 + bytes, 0x61);
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
    await waitFor(() => stats.uploads === 2, 'both segments uploaded', UPLOAD_WAIT_MS);
    assert.equal(partition.persistCandidates().length, 0);
  });
});
