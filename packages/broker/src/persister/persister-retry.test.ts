import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { type AppendBatch, defaultLogConfig, Partition, silentLogger } from '@booblik/log';
import { AckPolicy } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { type ObjectStore, openStore } from '@booblik/store';
import { tempDir, waitUntil } from '@booblik/testkit';
import { PartitionPersister, RETRY_FIRST_MS, RETRY_MAX_MS } from './partition-persister.js';
import { StoreHealth } from './store-health.js';

/** A file store that refuses every call while `down`. */
function breakableStore(inner: ObjectStore) {
  const state = { down: true };
  const refused = () => Promise.reject(new Error('store down'));
  const store: ObjectStore = {
    url: inner.url,
    put: (key, body, options) => (state.down ? refused() : inner.put(key, body, options)),
    putFile: (key, file, options) => (state.down ? refused() : inner.putFile(key, file, options)),
    get: (key, start, end) => (state.down ? refused() : inner.get(key, start, end)),
    head: (key) => (state.down ? refused() : inner.head(key)),
    list: (prefix) => {
      if (state.down) throw new Error('store down');
      return inner.list(prefix);
    },
    delete: (key) => (state.down ? refused() : inner.delete(key)),
    close: () => inner.close(),
  };
  return { store, state };
}

/** One record as a PRODUCE carries it: `int32 size, payload`. */
function oneRecord(bytes: number): AppendBatch {
  const records = Buffer.alloc(4 + bytes, 0x61);
  records.writeInt32BE(bytes, 0);
  return { records, count: 1 };
}

/** Lets the pass that just failed finish (its follow-up kick sets the retry timer). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

async function setUp(t: TestContext) {
  const clock = new ManualClock();
  const { partition } = Partition.open(tempDir(t, 'retry-data'), 'orders', 0, {
    ...defaultLogConfig,
    segmentBytesMax: 4096,
  });
  const { store, state } = breakableStore(await openStore(`file://${tempDir(t, 'retry-store')}`));
  const health = new StoreHealth(silentLogger);
  const stats = { uploads: 0, uploadedBytes: 0, storeRequests: 0, failures: 0, deletions: 0 };
  const persister = new PartitionPersister(
    partition,
    store,
    health,
    stats,
    silentLogger,
    undefined,
    () => true,
    clock,
  );
  t.after(async () => {
    await persister.close();
    await partition.close();
  });
  /** Resolves at the persister's next failed pass, once its retry is set. */
  const nextFailure = () =>
    new Promise<void>((resolve) => {
      const off = persister.on((event) => {
        if (event.kind !== 'failed') return;
        off();
        void settled().then(resolve);
      });
    });
  return { clock, partition, state, store, health, stats, persister, nextFailure };
}

describe('partition persister retry', () => {
  it('retries a failing store after 100 ms, doubling up to 10 s, never earlier', async (t) => {
    const s = await setUp(t);
    let failed = s.nextFailure();
    s.persister.kick();
    await failed;
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      const [wait] = s.clock.pendingDelays;
      assert.ok(wait !== undefined, 'a retry is set');
      waits.push(wait);
      const failures = s.stats.failures;
      s.clock.advance(wait - 1);
      await settled();
      assert.equal(s.stats.failures, failures, 'not retried before its wait ends');
      failed = s.nextFailure();
      s.clock.advance(1);
      await failed;
    }
    assert.equal(RETRY_FIRST_MS, 100);
    assert.equal(RETRY_MAX_MS, 10_000);
    assert.deepEqual(waits, [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
  });

  it('a pass that succeeds ends the backoff: the next failure waits 100 ms again', async (t) => {
    const s = await setUp(t);
    for (let i = 0; i < 4; i++) {
      const failed = s.nextFailure();
      if (i === 0) s.persister.kick();
      else s.clock.advance(s.clock.pendingDelays[0]!);
      await failed;
    }
    assert.deepEqual(s.clock.pendingDelays, [800]);
    s.state.down = false;
    s.clock.advance(800);
    await waitUntil(() => !s.health.isFailing(s.store.url), 'the store answered');
    await settled();
    assert.equal(s.clock.pendingTimers, 0, 'nothing to retry after a success');

    s.state.down = true;
    while (s.partition.persistCandidates().length === 0) {
      await s.partition.append(oneRecord(1000), AckPolicy.WRITTEN);
    }
    const failed = s.nextFailure();
    s.persister.kick();
    await failed;
    assert.deepEqual(s.clock.pendingDelays, [100]);
  });

  it('a closed persister retries no more', async (t) => {
    const s = await setUp(t);
    const failed = s.nextFailure();
    s.persister.kick();
    await failed;
    assert.equal(s.clock.pendingTimers, 1);
    await s.persister.close();
    assert.equal(s.clock.pendingTimers, 0, 'its retry is called off');
    const failures = s.stats.failures;
    s.persister.kick();
    s.clock.advance(60_000);
    await settled();
    assert.equal(s.stats.failures, failures);
  });
});
