import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HighWatermark } from './high-watermark.js';

describe('high watermark', () => {
  it('a write that lands just before a waiter subscribes still wakes it at once', () => {
    const hw = new HighWatermark(5);
    const seen = hw.value;
    hw.advance(6); // lands between the reader's check and its subscription
    const woken: number[] = [];
    hw.subscribe(seen, (v) => woken.push(v));
    assert.deepEqual(woken, [6]);
  });

  it('subscribers are told of every advance until they unsubscribe; it never moves back', () => {
    const hw = new HighWatermark(0);
    const woken: number[] = [];
    const stop = hw.subscribe(0, (v) => woken.push(v));
    hw.advance(2);
    hw.advance(1);
    hw.advance(3);
    stop();
    hw.advance(4);
    assert.deepEqual(woken, [2, 3]);
    assert.equal(hw.value, 4);
    assert.equal(hw.subscribers, 0);
  });
});
