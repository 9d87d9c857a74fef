import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultLogConfig, silentLogger } from '@booblik/log';
import { ManualClock } from '@booblik/protocol/testing';
import { RevisionNotReachedError } from '../errors.js';
import type { PartitionRegistry } from '../partitions.js';
import type { SpecStore } from './spec-store.js';
import { TopicService } from './topic-service.js';

/** A topic service at revision 0 that nothing changes: only its waits are looked at. */
function idleService(clock: ManualClock): TopicService {
  const store: SpecStore = { load: async () => null, replace: async () => {} };
  return new TopicService(store, {} as PartitionRegistry, defaultLogConfig, silentLogger, clock);
}

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('topic service waits', () => {
  test('a revision already reached is not waited for', async () => {
    const clock = new ManualClock();
    await idleService(clock).reach(0, 1000);
    assert.equal(clock.pendingTimers, 0);
  });

  test('a revision not reached is refused when its wait ends, not before', async () => {
    const clock = new ManualClock();
    let seen: unknown = 'waiting';
    const outcome = () => seen;
    void idleService(clock)
      .reach(3, 1000)
      .then(
        () => 'reached',
        (error: unknown) => error,
      )
      .then((o) => {
        seen = o;
      });
    clock.advance(999);
    await settled();
    assert.equal(outcome(), 'waiting', 'not refused before its wait ends');
    clock.advance(1);
    await settled();
    const refusal = outcome();
    assert.ok(refusal instanceof RevisionNotReachedError, String(refusal));
    assert.match(refusal.message, /revision 3 not reached in 1000 ms \(at 0\)/);
  });
});
