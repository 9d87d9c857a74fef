import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { tempDir, waitUntil } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { Partition } from './partition.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

/** 38 stored bytes per record of 30: two fit a segment, the third starts the next. */
const SEGMENT_BYTES = 100;

/**
 * Holds every fsync of `dir` made through `fs.promises` (the log's off-loop directory sync) until
 * `release()`; counts the synchronous fsyncs of any file, and tells when an fdatasync has completed.
 */
function watchSyncs(t: TestContext, dir: string) {
  const open = fs.promises.open;
  const fsyncSync = fs.fsyncSync;
  const fdatasync = fs.fdatasync;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { dirSyncsAsked: 0, syncFsyncs: 0, fdatasyncsDone: 0 };
  fs.promises.open = (async (...args: Parameters<typeof open>) => {
    const handle = await open(...args);
    if (path.resolve(String(args[0])) === path.resolve(dir)) {
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        state.dirSyncsAsked++;
        await released;
        return sync();
      };
    }
    return handle;
  }) as typeof open;
  fs.fsyncSync = (fd) => {
    state.syncFsyncs++;
    fsyncSync(fd);
  };
  fs.fdatasync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) =>
    fdatasync(fd, (error) => {
      state.fdatasyncsDone++;
      callback(error);
    })) as typeof fs.fdatasync;
  t.after(() => {
    fs.promises.open = open;
    fs.fsyncSync = fsyncSync;
    fs.fdatasync = fdatasync;
    release();
  });
  return { state, release };
}

/** Resolves once `condition()` holds, checking once per turn of the event loop; fails after 10 s. */
const until = (condition: () => boolean, what: string) => waitUntil(condition, what, 10_000, 0);

/** Whether `p` has settled, after the callbacks already due have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

function openPartition(t: TestContext, config = {}) {
  const dataDir = tempDir(t);
  const { partition } = Partition.open(dataDir, 't', 0, {
    ...defaultLogConfig,
    segmentBytesMax: SEGMENT_BYTES,
    tailCacheBytes: 0,
    ...config,
  });
  t.after(() => partition.close());
  return { partition, dir: path.join(dataDir, 't-0') };
}

describe('segment roll', () => {
  it('a FORCED batch that starts a new segment is acknowledged only once the name of that segment is synced, which the write itself never waits for', async (t) => {
    const { partition, dir } = openPartition(t);
    const syncs = watchSyncs(t, dir);
    const payloads = [rec(0, 30), rec(1, 30), rec(2, 30)];
    const appended = partition.append(batchOf(payloads), AckPolicy.FORCED);
    await until(() => syncs.state.dirSyncsAsked > 0, 'the directory sync of the FORCED barrier');
    await until(() => syncs.state.fdatasyncsDone >= 2, 'the fdatasyncs of both segments');
    assert.equal(await settled(appended), false, 'acknowledged before the new segment’s name was durable');
    syncs.release();
    assert.equal((await appended).baseOffset, 0);
    assert.equal(syncs.state.syncFsyncs, 0, 'an fsync ran on the event loop (the roll waited for it)');
    assert.equal(partition.segmentCount, 2);
    assert.deepEqual(await readAll(partition, 0), payloads);
  });

  it('a FORCED batch in a segment a background flush is still naming waits for that directory sync', async (t) => {
    // A flush after every record: the WRITTEN batch's roll is taken by the flush's sync.
    const { partition, dir } = openPartition(t, { flushEveryRecords: 1 });
    const syncs = watchSyncs(t, dir);
    await partition.append(batchOf([rec(0, 30), rec(1, 30), rec(2, 30)]), AckPolicy.WRITTEN);
    await until(() => syncs.state.dirSyncsAsked === 1, 'the background flush’s directory sync');
    await until(() => syncs.state.fdatasyncsDone === 2, 'the background flush’s fdatasyncs');
    const forced = partition.append(batchOf([rec(3, 30)]), AckPolicy.FORCED);
    await until(() => syncs.state.fdatasyncsDone === 3, 'the FORCED barrier’s fdatasync');
    assert.equal(
      await settled(forced),
      false,
      'acknowledged while the name of its segment was not yet durable',
    );
    syncs.release();
    assert.equal((await forced).baseOffset, 3);
    assert.equal(syncs.state.dirSyncsAsked, 1, 'one directory sync served both');
  });
});
