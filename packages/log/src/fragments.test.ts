import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig, type LogConfig } from './config.js';
import { StorageError } from './errors.js';
import type { Fragment } from './fragment.js';
import { PartitionLog } from './partition-log.js';
import { CORRUPT_FRAGMENT } from './remote-segment.js';
import { MemorySource, persistAll } from './test-support/memory-source.js';
import { batchOf, rec } from './test-support/records.js';

const SMALL: Partial<LogConfig> = { segmentBytesMax: 300, indexIntervalBytes: 40, tailCacheBytes: 0 };

function open(dir: string, source: MemorySource, fragments: Fragment[], config: Partial<LogConfig> = {}) {
  return PartitionLog.open(
    dir,
    't-0',
    { ...defaultLogConfig, ...SMALL, ...config },
    {
      remote: { source, fragments },
    },
  ).log;
}

/** Records of varied sizes (some longer than the index interval), published. */
function fill(log: PartitionLog, count: number): void {
  for (let i = 0; i < count; i++) {
    log.writeGroup([batchOf([rec(i, 10 + ((i * 37) % 70))])]);
    log.publish();
  }
}

/** What every offset reads, for several read sizes: the answer bytes exactly. */
async function answers(log: PartitionLog, from: number, to: number): Promise<string[]> {
  const out: string[] = [];
  for (let offset = from; offset < to; offset++) {
    for (const maxBytes of [1, 13, 50, 1000]) {
      const r = await log.read(offset, maxBytes);
      out.push(`${offset}/${maxBytes}:${Buffer.concat(r.chunks).toString('hex')}`);
    }
  }
  return out;
}

describe('partition log with a store', () => {
  it('reads below the local start come from the store with the same bytes a local read gave, from every offset', async (t) => {
    const source = new MemorySource();
    const log = open(tempDir(t), source, [], { localRetentionBytes: 0 });
    t.after(() => log.close());
    fill(log, 40);
    const end = log.logEndOffset;
    const local = await answers(log, 0, end);
    persistAll(log, source);
    log.enforceRetention();
    assert.ok(log.localStartOffset > 10, `local copies dropped (local start ${log.localStartOffset})`);
    assert.equal(log.logStartOffset, 0, 'the history stays readable');
    assert.deepEqual(await answers(log, 0, end), local);
    assert.ok(source.reads > 0, 'the old offsets were read from the store');
  });

  it('local retention never drops a segment that is not persisted', (t) => {
    const source = new MemorySource();
    const log = open(tempDir(t), source, [], { localRetentionBytes: 0, retentionBytes: 0 });
    t.after(() => log.close());
    fill(log, 40);
    const segments = log.segmentCount;
    assert.deepEqual(log.enforceRetention(), [], 'nothing persisted: nothing removed');
    assert.equal(log.segmentCount, segments);
    const persisted = persistAll(log, source, Date.now(), 2);
    const removed = log.enforceRetention();
    assert.deepEqual(
      removed,
      persisted.map((f) => f.baseOffset),
      'only the persisted segments went',
    );
    assert.equal(log.segmentCount, segments - 2);
    assert.equal(log.persistCandidates().length, segments - 3, 'every unpersisted closed segment is kept');
  });

  it('the spec retention drops fragments from the history and hands them over for deletion', (t) => {
    const source = new MemorySource();
    let now = 1_000_000;
    const dir = tempDir(t);
    const log = PartitionLog.open(
      dir,
      't-0',
      { ...defaultLogConfig, ...SMALL, localRetentionBytes: 0, retentionMs: 1000 },
      { remote: { source, fragments: [] }, now: () => now },
    ).log;
    t.after(() => log.close());
    fill(log, 40);
    const persisted = persistAll(log, source, now);
    log.enforceRetention(now);
    assert.deepEqual(log.takeExpiredFragments(), [], 'young fragments stay');
    now += 5000;
    log.enforceRetention(now);
    const expired = log.takeExpiredFragments();
    assert.deepEqual(
      expired.map((f) => f.key),
      persisted.map((f) => f.key),
      'every persisted segment expired, oldest first',
    );
    assert.equal(log.logStartOffset, log.localStartOffset, 'no history left below the disk');
    assert.deepEqual(log.takeExpiredFragments(), [], 'handed over once');
  });

  it('an empty directory restores the history: offsets continue, old offsets read from the store', async (t) => {
    const source = new MemorySource();
    const first = open(tempDir(t), source, []);
    fill(first, 40);
    const fragments = persistAll(first, source);
    const storeEnd = fragments[fragments.length - 1]!.endOffset;
    const before = await answers(first, 0, storeEnd);
    first.close();

    const restored = open(tempDir(t), source, fragments);
    t.after(() => restored.close());
    assert.equal(restored.logStartOffset, 0);
    assert.equal(restored.logEndOffset, storeEnd, 'the next record continues the history');
    const [base] = restored.writeGroup([batchOf([rec('after')])]);
    restored.publish();
    assert.equal(base, storeEnd);
    assert.deepEqual(await answers(restored, 0, storeEnd), before);
  });

  it('a flipped byte in a stored object is detected by its CRC and never served', async (t) => {
    const source = new MemorySource();
    const log = open(tempDir(t), source, [], { localRetentionBytes: 0 });
    t.after(() => log.close());
    fill(log, 40);
    const [first] = persistAll(log, source);
    log.enforceRetention();
    const object = source.objects.get(first!.key)!;
    object[object.length - 3]! ^= 0x01; // inside the last record's payload
    await log.read(0, 8); // the first record is intact and still served
    const last = first!.endOffset - 1;
    for (const offset of [0, last]) {
      await assert.rejects(log.read(offset, 1 << 20), (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.code, CORRUPT_FRAGMENT);
        return true;
      });
    }
  });
});
