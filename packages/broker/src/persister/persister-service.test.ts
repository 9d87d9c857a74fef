import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { silentLogger } from '@booblik/log';
import { ManualClock } from '@booblik/protocol/testing';
import { PERSIST_CHECK_MS, PersisterService } from './persister-service.js';

describe('persister service checks', () => {
  test('closed segments are looked for every second from the start until the service closes', async () => {
    const clock = new ManualClock();
    const service = new PersisterService(
      () => undefined,
      0,
      silentLogger,
      false,
      () => true,
      clock,
    );
    let checks = 0;
    service.kickAll = () => {
      checks++;
    };
    service.start();
    clock.advance(PERSIST_CHECK_MS - 1);
    assert.equal(checks, 0);
    clock.advance(1);
    clock.advance(2 * PERSIST_CHECK_MS);
    assert.equal(checks, 3, 'one check a second');
    await service.close();
    assert.equal(clock.pendingTimers, 0, 'no check is left set');
    clock.advance(10 * PERSIST_CHECK_MS);
    assert.equal(checks, 3);
  });
});
