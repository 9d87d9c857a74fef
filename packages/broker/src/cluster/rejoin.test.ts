import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '@booblik/protocol/testing';
import { REJOIN_RETRY_MS, Rejoin } from './rejoin.js';

/** A rejoin whose joins the test settles one by one. */
function setUp() {
  const clock = new ManualClock();
  const tries: { resolve: (member: string) => void; reject: (error: Error) => void }[] = [];
  const joined: string[] = [];
  const left: string[] = [];
  const state = { stopped: false };
  const rejoin = new Rejoin<string>(
    {
      join: () => new Promise((resolve, reject) => tries.push({ resolve, reject })),
      joined: (member) => joined.push(member),
      stopped: () => state.stopped,
      leave: (member) => left.push(member),
    },
    clock,
  );
  /** Refuses the latest try and lets its handler run. */
  const refuse = async () => {
    tries.at(-1)?.reject(new Error('etcd unreachable'));
    await settled();
  };
  return { clock, tries, joined, left, state, rejoin, refuse };
}

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('rejoin after a lost lease', () => {
  test('a refused join is tried again every second until etcd takes the broker back', async () => {
    const s = setUp();
    s.rejoin.start();
    assert.equal(s.tries.length, 1, 'the first try is at once');
    await s.refuse();
    assert.deepEqual(s.clock.pendingDelays, [REJOIN_RETRY_MS]);
    s.clock.advance(REJOIN_RETRY_MS - 1);
    assert.equal(s.tries.length, 1, 'not before the second is up');
    s.clock.advance(1);
    assert.equal(s.tries.length, 2);
    await s.refuse();
    s.clock.advance(REJOIN_RETRY_MS);
    assert.equal(s.tries.length, 3, 'the same wait each time, not doubled');
    s.tries[2]?.resolve('lease 3');
    await settled();
    assert.deepEqual(s.joined, ['lease 3']);
    assert.equal(s.clock.pendingTimers, 0, 'no try after the join');
  });

  test('a broker that closed while waiting tries no more', async () => {
    const s = setUp();
    s.rejoin.start();
    await s.refuse();
    s.state.stopped = true;
    s.rejoin.cancel();
    assert.equal(s.clock.pendingTimers, 0, 'the next try is called off');
    s.clock.advance(10 * REJOIN_RETRY_MS);
    assert.equal(s.tries.length, 1);
  });

  test('a broker that left after a hand-off does not join again when the wait ends', async () => {
    const s = setUp();
    s.rejoin.start();
    await s.refuse();
    s.state.stopped = true; // handed off and left: the timer is still set
    s.clock.advance(REJOIN_RETRY_MS);
    assert.equal(s.tries.length, 1);
  });

  test('a join that comes through after the broker stopped is left at once, never used', async () => {
    const s = setUp();
    s.rejoin.start();
    s.state.stopped = true;
    s.tries[0]?.resolve('lease 1');
    await settled();
    assert.deepEqual(s.joined, []);
    assert.deepEqual(s.left, ['lease 1']);
  });
});
