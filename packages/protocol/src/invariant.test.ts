import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvariantError, invariant } from './invariant.js';

test('invariant: a broken condition throws an InvariantError with its message', () => {
  assert.throws(
    () => invariant(false, () => 'high watermark went back from 5 to 4'),
    (error: unknown) =>
      error instanceof InvariantError && error.message === 'high watermark went back from 5 to 4',
  );
});

test('invariant: a held condition builds no message', () => {
  invariant(true, () => assert.fail('the message was built for a held condition'));
});
