import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvariantError } from '@booblik/protocol';
import { defaultLogConfig, type LogConfig } from './config.js';
import type { LogState } from './log-state.js';
import { PartitionLog } from './partition-log.js';
import type { Segment } from './segment.js';
import { MemoryFiles } from './test-support/memory-files.js';
import { batchOf, rec } from './test-support/records.js';

const STORED_BYTES = 8 + 20;

function openOn(config: Partial<LogConfig> = {}) {
  const errors: string[] = [];
  const logger = { info() {}, warn() {}, error: (m: string) => errors.push(m) };
  const { log } = PartitionLog.open(
    '/memory/topic-0',
    'topic-0',
    { ...defaultLogConfig, ...config },
    { files: new MemoryFiles(), logger },
  );
  return { log, errors };
}

/** The log's state, for breaking it on purpose the way a bug would. */
function stateOf(log: PartitionLog): LogState {
  return (log as unknown as { state: LogState }).state;
}

function write(log: PartitionLog, from: number, count: number): void {
  log.writeGroup([batchOf(Array.from({ length: count }, (_, i) => rec(from + i, 20)))]);
}

/** The log stopped with `pattern` in its message: closed, refusing writes and reads with the same error. */
async function assertStopped(log: PartitionLog, errors: string[], pattern: RegExp): Promise<void> {
  assert.match(log.stoppedBy?.message ?? '', pattern);
  assert.ok(
    errors.some((m) => pattern.test(m)),
    `the stop was logged: ${errors.join('; ')}`,
  );
  assert.throws(() => write(log, 100, 1), InvariantError);
  await assert.rejects(log.read(0, 1000), InvariantError);
  await assert.rejects(log.sync(), InvariantError);
}

describe('log invariants', () => {
  it('a segment that does not start where the active one ends stops the partition', async () => {
    const { log, errors } = openOn({ segmentBytesMax: 2 * STORED_BYTES });
    write(log, 0, 2);
    log.publish();
    // A roll with a bug: its new segment starts one offset late, leaving a gap.
    const set = stateOf(log).segments;
    const append = set.append.bind(set);
    set.append = (segment) => {
      (segment as { baseOffset: number }).baseOffset += 1;
      append(segment);
    };
    assert.throws(
      () => write(log, 2, 1),
      (e) => e instanceof InvariantError && /segments must be contiguous/.test(e.message),
    );
    await assertStopped(log, errors, /from offset 3 follows one ending at 2/);
  });

  it('a log end that goes back outside truncateTo stops the partition', async () => {
    const { log, errors } = openOn();
    write(log, 0, 3);
    log.active.nextOffset -= 2; // a bug: the next record would reuse offset 1
    assert.throws(() => write(log, 3, 1), InvariantError);
    await assertStopped(log, errors, /the log end went back from 3 to 2/);
  });

  it('truncateTo may move the log end back without tripping anything', () => {
    const { log } = openOn();
    write(log, 0, 3);
    log.publish(1);
    log.truncateTo(1);
    write(log, 1, 1);
    assert.equal(log.logEndOffset, 2);
    assert.equal(log.stoppedBy, undefined);
  });

  it('retention that would put the log start past the high watermark stops the partition', async () => {
    const { log, errors } = openOn({ segmentBytesMax: 2 * STORED_BYTES, retentionBytes: 0 });
    write(log, 0, 2);
    log.publish();
    write(log, 2, 2); // a second segment, not published
    write(log, 4, 1); // the active third one
    const [, second] = stateOf(log).segments.local() as [Segment, Segment];
    second.nextOffset = 2; // a bug: it looks published and empty, so retention may take it
    assert.throws(() => log.enforceRetention(), InvariantError);
    await assertStopped(log, errors, /log start to 4, past the high watermark 2/);
  });

  it('a read that would see records past the high watermark stops the partition', async () => {
    const { log, errors } = openOn({ tailCacheBytes: 0 });
    write(log, 0, 2);
    log.publish(1);
    log.active.visibleEndOffset = 2; // a bug: the unpublished record made visible
    log.active.visibleBytes = log.active.sizeBytes;
    await assert.rejects(log.read(0, 1000), InvariantError);
    await assertStopped(log, errors, /up to 2, past the high watermark 1/);
  });

  it('a publish past the log end stops the partition', async () => {
    const { log, errors } = openOn();
    write(log, 0, 2);
    assert.throws(() => log.publish(5), InvariantError);
    await assertStopped(log, errors, /publish to 5, past the log end 2/);
  });
});
