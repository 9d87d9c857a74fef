import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvariantError } from '@booblik/protocol';
import {
  checkCommitMove,
  checkEpochRises,
  checkedMove,
  checkInSyncHoldsPrimary,
  checkOneRole,
} from './replication-rules.js';

const inSync = [
  { member: 'b', ackedEnd: 10 },
  { member: 'c', ackedEnd: 12 },
];

test('rules: a commit offset that goes back is a broken rule', () => {
  assert.throws(
    () => checkCommitMove('t-0', 8, 7, 20, inSync),
    (e: Error) => {
      return e instanceof InvariantError && /go back from 8 to 7/.test(e.message);
    },
  );
});

test('rules: a commit offset past what an in-sync replica acknowledged is a broken rule', () => {
  assert.throws(() => checkCommitMove('t-0', 8, 11, 20, inSync), /pass what in-sync b acknowledged \(10\)/);
});

test('rules: a commit offset past the log end is a broken rule', () => {
  assert.throws(() => checkCommitMove('t-0', 8, 10, 9, inSync), /pass the log end 9/);
});

test('rules: a commit offset every in-sync replica holds passes', () => {
  checkCommitMove('t-0', 8, 10, 20, inSync);
  checkCommitMove('t-0', 10, 10, 10, []);
});

test('rules: an in-sync set without its primary is a broken rule', () => {
  assert.throws(() => checkInSyncHoldsPrimary('t-0', 'a', ['b']), InvariantError);
  checkInSyncHoldsPrimary('t-0', 'a', ['a', 'b']);
});

test('rules: an epoch that goes back is a broken rule', () => {
  assert.throws(() => checkEpochRises('t-0', 4, 3), /epoch would go back from 4 to 3/);
  checkEpochRises('t-0', 4, 4);
});

test('rules: a move the states do not allow throws', () => {
  const moves = { a: ['b'], b: [] } as const;
  assert.equal(checkedMove('x', moves, 'a', 'b'), 'b');
  assert.throws(() => checkedMove('x', moves, 'b', 'a'), /x: b -> a is not a move of its states/);
});

test('rules: a partition that would be primary and replica at once is a broken rule', () => {
  assert.throws(() => checkOneRole('t-0', 'serving'), /still serving/);
  assert.throws(() => checkOneRole('t-0', 'covering'), InvariantError);
  checkOneRole('t-0', 'stopped');
  checkOneRole('t-0', null);
});
