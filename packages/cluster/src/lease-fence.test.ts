import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvariantError } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { LeaseFence } from './lease-fence.js';

const LEASE_MS = 5000;

test('lease fence: a lease with no keepalive confirmed is in doubt before its TTL from the grant ends', () => {
  const clock = new ManualClock();
  const fence = new LeaseFence(LEASE_MS, clock, clock.now());
  clock.advance(LEASE_MS - 501);
  assert.equal(fence.certain, true);
  clock.advance(1);
  assert.equal(fence.certain, false, 'the margin of 500 ms before the TTL');
});

test('lease fence: a confirmed keepalive extends the lease from when it was sent, not answered', () => {
  const clock = new ManualClock();
  const fence = new LeaseFence(LEASE_MS, clock, clock.now());
  clock.advance(1000);
  fence.keepaliveSent();
  clock.advance(3000); // a slow answer
  fence.keepaliveConfirmed();
  clock.advance(LEASE_MS - 500 - 3000 - 1);
  assert.equal(fence.certain, true);
  clock.advance(1);
  assert.equal(fence.certain, false);
});

test('lease fence: a keepalive sent but never confirmed extends nothing (a heartbeat owed)', () => {
  const clock = new ManualClock();
  const fence = new LeaseFence(LEASE_MS, clock, clock.now());
  clock.advance(1000);
  fence.keepaliveSent();
  clock.advance(LEASE_MS - 500 - 1000);
  assert.equal(fence.certain, false);
});

test('lease fence: a short lease keeps a quarter of its TTL as margin', () => {
  const clock = new ManualClock();
  const fence = new LeaseFence(1000, clock, clock.now());
  clock.advance(749);
  assert.equal(fence.certain, true);
  clock.advance(1);
  assert.equal(fence.certain, false);
});

test('lease fence: a lost lease is never certain again, whatever keepalives say', () => {
  const clock = new ManualClock();
  const fence = new LeaseFence(LEASE_MS, clock, clock.now());
  fence.transition('lost');
  fence.keepaliveSent();
  fence.keepaliveConfirmed();
  assert.equal(fence.certain, false);
  assert.throws(() => fence.transition('alive'), InvariantError);
  assert.throws(() => fence.transition('left'), /lost -> left is not a move/);
});
