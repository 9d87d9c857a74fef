import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { FakeBroker, MemoryLog } from '@booblik/client/testing';
import { booblikMain, start } from '../test-support/spawn.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

async function serve(topics: Record<string, number>): Promise<{ log: MemoryLog; broker: FakeBroker }> {
  const log = new MemoryLog(topics);
  const broker = await FakeBroker.start(log.handle);
  brokers.push(broker);
  return { log, broker };
}

describe('booblik consume into a pipe', () => {
  it('a reader that stops early (| head -1) ends it with exit 0 and nothing on stderr, not "write EPIPE"', async () => {
    const { log, broker } = await serve({ t: 1 });
    // Far more than a pipe buffers, so the command is still writing when the reader goes.
    log.append(
      't',
      0,
      Array.from({ length: 4000 }, (_, i) => Buffer.from(`${i} ${'x'.repeat(200)}`)),
    );
    const child = start([process.execPath, booblikMain, 'consume', 't', '--broker', broker.address]);
    await child.stdoutContains('\n');
    child.closeStdout();
    const run = await child.finished;
    assert.equal(run.stderr, '');
    assert.equal(run.code, 0);
  });
});
