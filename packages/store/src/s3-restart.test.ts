import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFaultProxy, waitUntil, within } from '@booblik/testkit';
import { ObjectNotFoundError, StoreUnavailableError } from './errors.js';
import type { ObjectStore } from './object-store.js';
import { openStore } from './open-store.js';
import { collect } from './test-support/contract.js';
import { s3ServerForSuite, s3TestsSkipped, TEST_CREDENTIALS } from './test-support/s3-server.js';

/** Refused connections fail at once; the SDK's own retries (3 attempts) add well under a second. */
const DOWN_CALL_TIMEOUT_MS = 15_000;

const isUnavailable = (error: unknown) => {
  assert.ok(error instanceof StoreUnavailableError, `expected StoreUnavailableError, got ${error}`);
  assert.equal(error.retriable, true);
  return true;
};

describe('s3:// when the server goes away', { skip: s3TestsSkipped() ?? false }, () => {
  const suiteServer = s3ServerForSuite();

  it('killed mid-upload and while down: calls fail retriable; after a restart they work, nothing half-written', async () => {
    const server = suiteServer();
    const proxy = await startFaultProxy({ target: `127.0.0.1:${server.port}` });
    const url = server.url('restart/', `http://${proxy.address}`);
    const quick = await openStore(url, { s3: { credentials: TEST_CREDENTIALS, maxAttempts: 1 } });
    // The SDK's default retries: they must end in the same typed error, not hang.
    const patient = await openStore(url, { s3: { credentials: TEST_CREDENTIALS } });
    try {
      const kept = Buffer.from('written before the crash');
      await quick.put('kept', kept);

      const big = Buffer.alloc(64 << 20, 0x42);
      const before = proxy.stats.bytesToTarget;
      // Settled into a value at once: it fails while the test is still waiting for the kill.
      const upload = quick.put('big', big).then(
        () => assert.fail('the upload finished although the server was killed midway'),
        (error: unknown) => error,
      );
      await waitUntil(
        () => proxy.stats.bytesToTarget >= before + big.length / 2,
        'half the upload to reach the server',
        10_000,
      );
      await server.kill();
      isUnavailable(await within(upload, DOWN_CALL_TIMEOUT_MS, 'the cut upload'));

      for (const store of [quick, patient] as ObjectStore[]) {
        for (const call of [
          () => store.put('during', Buffer.from('x')),
          () => store.get('kept'),
          () => store.get('kept', 0, 5),
          () => store.head('kept'),
          () => store.delete('kept'),
          () => collect(store.list()),
        ] as (() => Promise<unknown>)[]) {
          await assert.rejects(
            within(call(), DOWN_CALL_TIMEOUT_MS, 'a call to the stopped server'),
            isUnavailable,
          );
        }
      }

      await server.start();
      assert.ok((await patient.get('kept')).equals(kept), 'an object from before the crash is intact');
      await assert.rejects(quick.head('big'), ObjectNotFoundError, 'the cut upload left no object');
      await assert.rejects(quick.head('during'), ObjectNotFoundError);
      assert.deepEqual(
        (await collect(quick.list())).map((o) => o.key),
        ['kept'],
      );
      await quick.put('big', big);
      assert.ok((await quick.get('big')).equals(big), 'the same upload succeeds once the server is back');
    } finally {
      quick.close();
      patient.close();
      await proxy.close();
    }
  });
});
