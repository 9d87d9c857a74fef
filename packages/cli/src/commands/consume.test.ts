import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, FakeBroker, MemoryLog } from '@booblik/client/testing';
import { booblik, booblikMain, start } from '../test-support/spawn.js';

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

const lines = (stdout: Buffer) =>
  stdout
    .toString()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { partition: number; offset: number; payload: string });

describe('booblik consume without --partition', () => {
  it('reads every partition, not only 0, each line of --format json naming its partition', async () => {
    const { log, broker } = await serve({ t: 3 });
    log.append('t', 0, [Buffer.from('p0-a')]);
    log.append('t', 1, [Buffer.from('p1-a'), Buffer.from('p1-b')]);
    log.append('t', 2, [Buffer.from('p2-a')]);
    const run = await booblik(['consume', 't', '--format', 'json', '--broker', broker.address]);
    assert.equal(run.code, 0, run.stderr);
    const got = lines(run.stdout);
    assert.deepEqual(got.map((r) => `${r.partition}:${r.offset}:${r.payload}`).sort(), [
      '0:0:p0-a',
      '1:0:p1-a',
      '1:1:p1-b',
      '2:0:p2-a',
    ]);
    const inOrder = (p: number) => got.filter((r) => r.partition === p).map((r) => r.offset);
    assert.deepEqual(inOrder(1), [0, 1], "each partition's records in offset order");
  });

  it('--from -N is the last N records of each partition (all of a shorter one)', async () => {
    const { log, broker } = await serve({ t: 2 });
    log.append(
      't',
      0,
      ['a', 'b', 'c', 'd', 'e'].map((s) => Buffer.from(s)),
    );
    log.append('t', 1, [Buffer.from('only')]);
    const run = await booblik([
      'consume',
      't',
      '--from',
      '-2',
      '--format',
      'json',
      '--broker',
      broker.address,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      lines(run.stdout)
        .map((r) => `${r.partition}:${r.payload}`)
        .sort(),
      ['0:d', '0:e', '1:only'],
    );
  });

  it('--max-records counts records across partitions', async () => {
    const { log, broker } = await serve({ t: 2 });
    log.append(
      't',
      0,
      ['a', 'b', 'c'].map((s) => Buffer.from(s)),
    );
    log.append(
      't',
      1,
      ['x', 'y', 'z'].map((s) => Buffer.from(s)),
    );
    const run = await booblik(['consume', 't', '--max-records', '4', '--broker', broker.address]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.toString().split('\n').filter(Boolean).length, 4);
  });

  it('an offset (--from N) names a position in one partition: with several it asks for --partition', async () => {
    const { log, broker } = await serve({ t: 2, single: 1 });
    log.append(
      'single',
      0,
      ['a', 'b'].map((s) => Buffer.from(s)),
    );
    const refused = await booblik(['consume', 't', '--from', '1', '--broker', broker.address]);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /--from 1: an offset is a position in one partition, and topic t has 2: give --partition/,
    );
    const one = await booblik(['consume', 'single', '--from', '1', '--broker', broker.address]);
    assert.equal(one.stdout.toString(), 'b\n', 'a topic of one partition needs no --partition');
  });
});

/** Resolves once `broker` holds a follower's FETCH at `offset` (a long poll at the end) of `partition`. */
async function heldFetch(broker: FakeBroker, offset: number, partition = 0): Promise<void> {
  for (;;) {
    const r = await broker.nextArrival();
    if (
      r.apiKey === ApiKey.FETCH &&
      r.body.partition === partition &&
      r.body.fetchOffset === offset &&
      r.body.maxWaitMs > 0
    ) {
      return;
    }
  }
}

describe('booblik consume --follow of several partitions', () => {
  it("a fetch held for an idle partition never holds back another partition's records", async (t) => {
    const log = new MemoryLog({ t: 2 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Partition 0 is idle: the broker holds its long fetches for as long as the test runs.
    const broker = await FakeBroker.start(async (req) => {
      const { request } = req;
      if (request.apiKey === ApiKey.FETCH && request.body.partition === 0 && request.body.maxWaitMs > 0) {
        await released;
      }
      return log.handle(req);
    });
    t.after(async () => {
      release();
      await broker.close();
    });
    const child = start([
      process.execPath,
      booblikMain,
      'consume',
      't',
      '--follow',
      '--broker',
      broker.address,
    ]);
    t.after(() => child.kill('SIGKILL'));
    await heldFetch(broker, 0);
    log.append('t', 1, [Buffer.from('to the busy partition')]);
    await child.stdoutContains('to the busy partition\n');
    child.kill('SIGINT');
    assert.equal((await child.finished).code, 0);
  });
});
