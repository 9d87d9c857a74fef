import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AckPolicy, encodeStoredRecords } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { EPOCH_HISTORY_FILE } from './epoch-history.js';
import { EpochHistoryError } from './errors.js';
import { Partition } from './partition.js';
import type { PartitionLog } from './partition-log.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, rec } from './test-support/records.js';

const open = (dataDir: string) => Partition.open(dataDir, 't', 0, defaultLogConfig).partition;
/** The partition's log, for a test that must watch its fdatasyncs. */
const logOf = (p: Partition) => (p as unknown as { log: PartitionLog }).log;

describe('partition: replication surface', () => {
  it('writeReplicated with forced resolves only after an fdatasync that covers the group', async (t) => {
    const partition = open(tempDir(t));
    t.after(() => partition.close());
    const log = logOf(partition);
    let syncs = 0;
    const realSync = log.sync.bind(log);
    log.sync = async () => {
      await realSync();
      syncs++;
    };
    await partition.writeReplicated(0, encodeStoredRecords([rec(0)]), 1, false);
    assert.equal(syncs, 0, 'WRITTEN: no fdatasync');
    await partition.writeReplicated(1, encodeStoredRecords([rec(1), rec(2)]), 2, true);
    assert.equal(syncs, 1, 'FORCED: resolved after its fdatasync completed');
    assert.equal(partition.logEndOffset, 3);
    assert.equal(partition.highWatermark.value, 0, 'not readable before the commit offset');
    partition.publishCommitted(3);
    assert.deepEqual(await readAll(partition, 0), [rec(0), rec(1), rec(2)]);
    await assert.rejects(partition.writeReplicated(5, encodeStoredRecords([rec(5)]), 1, false), {
      name: 'OffsetMismatchError',
    });
  });

  it('the epoch history opens beside the log, and truncateTo cuts both', async (t) => {
    const dataDir = tempDir(t);
    const partition = open(dataDir);
    partition.epochs.begin(1, 0);
    await partition.writeReplicated(0, encodeStoredRecords([rec(0), rec(1)]), 2, false);
    partition.epochs.begin(2, 2);
    await partition.writeReplicated(2, encodeStoredRecords([rec(2), rec(3)]), 2, false);
    partition.publishCommitted(2);
    partition.truncateTo(2);
    assert.equal(partition.logEndOffset, 2);
    assert.deepEqual(partition.epochs.entries, [{ epoch: 1, startOffset: 0 }]);
    await partition.close();
    const again = open(dataDir);
    t.after(() => again.close());
    assert.deepEqual(again.epochs.entries, [{ epoch: 1, startOffset: 0 }]);
    assert.equal(again.logEndOffset, 2);
  });

  it('truncateTo is refused while an append still waits for its answer, and allowed once it is failed', async (t) => {
    const partition = open(tempDir(t));
    t.after(() => partition.close());
    partition.setReplicationGate({ groupWritten: () => {} });
    const pending = partition.append(batchOf([rec(0), rec(1)]), AckPolicy.WRITTEN);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(partition.logEndOffset, 2);
    assert.throws(() => partition.truncateTo(0), /still wait for an answer/);
    assert.equal(partition.logEndOffset, 2, 'nothing cut');
    partition.failUncommitted(new Error('no longer primary'), new Error('no longer primary'));
    await assert.rejects(pending, /no longer primary/);
    partition.truncateTo(0);
    assert.equal(partition.logEndOffset, 0);
    partition.commitTo(2); // a stale commit for the cut groups publishes nothing
    assert.equal(partition.highWatermark.value, 0);
  });

  it('a damaged epochs file refuses the open with EpochHistoryError', async (t) => {
    const dataDir = tempDir(t);
    await open(dataDir).close();
    fs.writeFileSync(path.join(dataDir, 't-0', EPOCH_HISTORY_FILE), 'one zero\n');
    assert.throws(() => open(dataDir), EpochHistoryError);
  });

  it('a former primary whose waiters were failed closes without waiting, and follows with publishCommitted', async (t) => {
    const dataDir = tempDir(t);
    const demoted = open(dataDir);
    demoted.setReplicationGate({ groupWritten: () => {} });
    const pending = demoted.append(batchOf([rec(0), rec(1)]), AckPolicy.WRITTEN);
    await new Promise((resolve) => setImmediate(resolve));
    demoted.failUncommitted(new Error('no longer primary'), new Error('no longer primary'));
    await assert.rejects(pending);
    demoted.setReplicationGate(null);
    await demoted.writeReplicated(2, encodeStoredRecords([rec(2)]), 1, false);
    demoted.publishCommitted(3);
    assert.equal(demoted.highWatermark.value, 3);
    assert.deepEqual(await readAll(demoted, 0), [rec(0), rec(1), rec(2)]);
    await demoted.close();

    const again = open(dataDir);
    again.setReplicationGate({ groupWritten: () => {} });
    const failed = again.append(batchOf([rec(3)]), AckPolicy.WRITTEN);
    await new Promise((resolve) => setImmediate(resolve));
    again.failUncommitted(new Error('lease lost'), new Error('lease lost'));
    await assert.rejects(failed);
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      again.close().then(() => 'closed'),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 2000, 'still waiting');
      }),
    ]);
    clearTimeout(timer);
    assert.equal(closed, 'closed', 'close does not wait for a commit of groups already failed');
  });
});
