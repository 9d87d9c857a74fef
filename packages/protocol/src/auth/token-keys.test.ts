import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTokenKeys } from './token-keys.js';

const secret = Buffer.alloc(32, 7).toString('base64url');

describe('token keys file', () => {
  it('lists keys in order, the first one signing; comments and blank lines skipped', () => {
    const keys = parseTokenKeys(`# rotated 2026-12\nk2 ${secret}\n\nk1 ${secret}  # old\n`, 'keys');
    assert.deepEqual(
      keys.map((k) => k.id),
      ['k2', 'k1'],
    );
    assert.equal(keys[0]!.secret.length, 32);
  });

  it('a short secret, a bad line, a repeated id or no key is refused naming the line, never the secret', () => {
    const short = Buffer.alloc(16).toString('base64url');
    for (const [text, message] of [
      [`k ${short}`, /keys:1: key k: the secret is 16 bytes, at least 32/],
      [`k`, /keys:1: expected "ID SECRET"/],
      [`k ${secret}\nk ${secret}`, /keys:2: key id k is listed twice/],
      [`# nothing`, /keys: no key/],
      [`k! ${secret}`, /keys:1: key id "k!"/],
    ] as const) {
      assert.throws(
        () => parseTokenKeys(text, 'keys'),
        (e: unknown) => message.test((e as Error).message) && !(e as Error).message.includes(secret),
      );
    }
  });
});
