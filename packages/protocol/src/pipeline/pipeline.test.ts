import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../test-support/manual-clock.js';
import { type InFlight, Pipeline } from './pipeline.js';

interface Request extends InFlight {
  name: string;
}

function setUp() {
  const clock = new ManualClock();
  const timedOut: string[] = [];
  const pipeline = new Pipeline<Request>(clock, (request) => timedOut.push(request.name));
  const send = (name: string, timeoutMs: number): Request => {
    const request = {
      correlationId: pipeline.takeCorrelationId(),
      deadline: clock.now() + timeoutMs,
      abandoned: false,
      name,
    };
    pipeline.add(request);
    return request;
  };
  return { clock, pipeline, timedOut, send };
}

describe('Pipeline', () => {
  it('answers that come out of order each reach their own request, by correlation id', () => {
    const { pipeline, send } = setUp();
    const a = send('a', 1000);
    const b = send('b', 1000);
    const c = send('c', 1000);
    assert.equal(pipeline.take(c.correlationId)?.name, 'c');
    assert.equal(pipeline.take(a.correlationId)?.name, 'a');
    assert.equal(pipeline.size, 1);
    assert.equal(pipeline.take(b.correlationId)?.name, 'b');
    assert.equal(pipeline.take(b.correlationId), undefined, 'an id answered once has no one waiting');
  });

  it('takeOldest hands requests back in the order written', () => {
    const { pipeline, send } = setUp();
    send('a', 1000);
    send('b', 1000);
    assert.equal(pipeline.takeOldest()?.name, 'a');
    assert.equal(pipeline.takeOldest()?.name, 'b');
    assert.equal(pipeline.takeOldest(), undefined);
  });

  it('a short deadline sent after a long one times out at its own time, not the long one', () => {
    const { clock, pipeline, timedOut, send } = setUp();
    send('long', 10_000);
    clock.advance(100);
    send('short', 500);
    clock.advance(499);
    assert.deepEqual(timedOut, []);
    clock.advance(1);
    assert.deepEqual(timedOut, ['short'], 'the short one fails 500 ms after it was sent');
    assert.equal(pipeline.size, 1, 'the long one still waits');
    clock.advance(9_399);
    assert.deepEqual(timedOut, ['short']);
    clock.advance(1);
    assert.deepEqual(timedOut, ['short', 'long']);
    assert.equal(clock.pendingTimers, 0, 'nothing in flight: no timer left');
  });

  it('keeps one timer for any number of requests in flight', () => {
    const { clock, send } = setUp();
    for (let i = 0; i < 100; i++) send(`r${i}`, 1000 + i);
    assert.equal(clock.pendingTimers, 1);
  });

  it('an abandoned request no longer times out, yet its answer is still taken in its turn', () => {
    const { clock, pipeline, timedOut, send } = setUp();
    const a = send('a', 100);
    a.abandoned = true;
    clock.advance(1000);
    assert.deepEqual(timedOut, []);
    assert.equal(pipeline.anyWaiting, false);
    assert.equal(pipeline.take(a.correlationId)?.name, 'a');
  });

  it('close fails every request in flight exactly once', () => {
    const { clock, pipeline, send } = setUp();
    send('a', 1000);
    send('b', 2000);
    const failed: string[] = [];
    pipeline.close((request) => failed.push(request.name));
    pipeline.close((request) => failed.push(request.name));
    assert.deepEqual(failed, ['a', 'b']);
    assert.equal(pipeline.size, 0);
    assert.equal(clock.pendingTimers, 0, 'deadlines stop with the close');
    clock.advance(5000);
    assert.throws(() => send('c', 1000), /after close/);
  });

  it('a request that timed out is out of the pipeline: its late answer is dropped', () => {
    const { clock, pipeline, timedOut, send } = setUp();
    const a = send('a', 100);
    clock.advance(100);
    assert.deepEqual(timedOut, ['a']);
    assert.equal(pipeline.take(a.correlationId), undefined);
    assert.deepEqual(timedOut, ['a'], 'timed out once, never answered');
  });

  it('a timeout that closes the pipeline fails the rest once, through close', () => {
    const clock = new ManualClock();
    const events: string[] = [];
    const pipeline: Pipeline<Request> = new Pipeline<Request>(clock, (request) => {
      events.push(`timeout ${request.name}`);
      pipeline.close((rest) => events.push(`closed ${rest.name}`));
    });
    for (const [name, timeoutMs] of [
      ['a', 100],
      ['b', 100],
    ] as const) {
      pipeline.add({
        correlationId: pipeline.takeCorrelationId(),
        deadline: timeoutMs,
        abandoned: false,
        name,
      });
    }
    clock.advance(100);
    assert.deepEqual(events, ['timeout a', 'closed b']);
  });
});
