import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '@booblik/log';
import { logPurge } from './persister-service.js';

function recorder() {
  const lines: string[] = [];
  const logger: Logger = {
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
  return { lines, logger };
}

const STORE = 'file:///srv/booblik';

describe('the line a purge logs', () => {
  it('one line for the topic: the store and the objects of every partition', () => {
    const { lines, logger } = recorder();
    logPurge(
      logger,
      'orders',
      [
        { partition: 0, storeUrl: STORE, objects: 4 },
        { partition: 1, storeUrl: STORE, objects: 3 },
      ],
      { partitions: 2, storeUrl: STORE },
    );
    assert.deepEqual(lines, [
      `INFO topic orders: deleted with its store history: 7 object(s) of 2 partition(s) removed from store ${STORE}`,
    ]);
  });

  it('a store that failed part way, or a partition that was not open, is an error saying what is left', () => {
    const failed = recorder();
    logPurge(failed.logger, 'orders', [
      { partition: 0, storeUrl: STORE, objects: 4 },
      { partition: 1, storeUrl: STORE, objects: 0, error: 'EIO' },
    ]);
    assert.match(
      failed.lines[0]!,
      /^ERROR topic orders: deleted, but its store history was not all removed \(4 object\(s\) of 2 partition\(s\) removed from store file:\/\/\/srv\/booblik; partition 1: EIO\): remove what is left under orders\/ with the store's tools$/,
    );

    const missing = recorder();
    logPurge(missing.logger, 'orders', [{ partition: 0, storeUrl: STORE, objects: 4 }], {
      partitions: 3,
      storeUrl: STORE,
    });
    assert.match(missing.lines[0]!, /^ERROR .*; partition\(s\) 1, 2 not open here, so not purged\)/);

    const none = recorder();
    logPurge(none.logger, 'orders', [], { partitions: 1, storeUrl: STORE });
    assert.match(
      none.lines[0]!,
      /^ERROR .*0 object\(s\) of 0 partition\(s\) removed from store file:\/\/\/srv\/booblik; partition\(s\) 0 not open here/,
    );
  });
});
