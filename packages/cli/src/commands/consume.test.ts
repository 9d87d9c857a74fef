import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, FakeBroker, FakeCluster, type FakeClusterNode, MemoryLog } from '@booblik/client/testing';
import { ErrorCode, encodeErrorResponse, encodeMetadataResponse } from '@booblik/protocol';
import { BrokerProcess } from '@booblik/testkit';
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

describe('booblik consume --follow through failures', () => {
  it('NO_PRIMARY during a failover: one line saying it waits and why, then it resumes on the new primary', async (t) => {
    const cluster = await FakeCluster.start({ t: 1 }, 2);
    t.after(() => cluster.close());
    const [first, second] = cluster.nodes as [FakeClusterNode, FakeClusterNode];
    cluster.log.append('t', 0, [Buffer.from('before')]);
    const child = start([
      process.execPath,
      booblikMain,
      'consume',
      't',
      '--follow',
      '--broker',
      first.address,
    ]);
    t.after(() => child.kill('SIGKILL'));
    await child.stdoutContains('before\n');
    await heldFetch(first.broker, 1);
    // The primary goes away: nobody leads the partition until the new primary is known.
    cluster.route('t', 0, '');
    cluster.log.append('t', 0, [Buffer.from('last from the old primary')]); // ends the fetch it held
    const waiting = await child.stderrContains('waiting');
    assert.match(waiting, /^booblik: t\/0: waiting at offset 2: .*NO_PRIMARY.*; retrying with backoff/m);
    cluster.route('t', 0, second.address);
    cluster.log.append('t', 0, [Buffer.from('after')]);
    await child.stdoutContains('after\n');
    const resumed = await child.stderrContains('resumed');
    child.kill('SIGINT');
    const run = await child.finished;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout.toString(),
      'before\nlast from the old primary\nafter\n',
      'nothing lost, nothing twice',
    );
    assert.equal(resumed.match(/waiting at/g)?.length, 1, `one waiting line per outage:\n${resumed}`);
    assert.match(resumed, /^booblik: t\/0: resumed at offset 2$/m);
    assert.ok(
      second.served.some((r) => r.apiKey === ApiKey.FETCH),
      'the records after the failover came from the new primary',
    );
  });

  it('a lost broker: one waiting line naming the failure, and it reads on once the broker answers again', async (t) => {
    const log = new MemoryLog({ t: 1 });
    let cut = false;
    const broker = await FakeBroker.start((req) => {
      if (cut) {
        req.peer.destroy(); // every request of every connection is cut
        return null;
      }
      return log.handle(req);
    });
    t.after(() => broker.close());
    log.append('t', 0, [Buffer.from('one')]);
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
    await child.stdoutContains('one\n');
    cut = true;
    broker.dropConnections();
    const waiting = await child.stderrContains('waiting');
    assert.match(waiting, /t\/0: waiting at offset 1: .*(closed|reset|connect)/i);
    cut = false;
    log.append('t', 0, [Buffer.from('two')]);
    await child.stdoutContains('two\n');
    child.kill('SIGINT');
    const run = await child.finished;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.toString(), 'one\ntwo\n');
  });

  it('retention removed its position: exit 1 saying where the partition now starts and what to run', async (t) => {
    const log = new MemoryLog({ t: 1 });
    let logStart = 0;
    let moveStart!: () => void;
    const moved = new Promise<void>((resolve) => {
      moveStart = resolve;
    });
    const broker = await FakeBroker.start(async (req) => {
      const { request } = req;
      if (request.apiKey === ApiKey.METADATA) {
        const highWatermark = log.records('t', 0).length;
        return encodeMetadataResponse(request.correlationId, [
          { name: 't', partitions: [{ partition: 0, logStartOffset: logStart, highWatermark }] },
        ]);
      }
      if (request.apiKey === ApiKey.FETCH) {
        // The follower's fetch at the end is held until the test has retention move the start past it.
        if (request.body.fetchOffset >= log.records('t', 0).length && logStart === 0) await moved;
        if (request.body.fetchOffset < logStart) {
          return encodeErrorResponse(request.correlationId, ErrorCode.OFFSET_OUT_OF_RANGE);
        }
      }
      return log.handle(req);
    });
    t.after(() => broker.close());
    log.append(
      't',
      0,
      ['a', 'b', 'c'].map((s) => Buffer.from(s)),
    );
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
    await child.stdoutContains('c\n');
    log.append(
      't',
      0,
      Array.from({ length: 12 }, (_, i) => Buffer.from(`later ${i}`)),
    );
    logStart = 10;
    moveStart();
    const run = await child.finished;
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'booblik: t/0: offset 3 is gone: retention removed the records before 10, where the partition now starts; ' +
        'run again with --from earliest (or --partition 0 --from 10)\n',
    );
  });
});

describe('booblik consume --follow on a topic that changes', () => {
  it('a partition added while following is read from its first record', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=grows:1'] })).address;
    const child = start([
      process.execPath,
      booblikMain,
      'consume',
      'grows',
      '--follow',
      '--format',
      'json',
      '--broker',
      broker,
    ]);
    t.after(() => child.kill('SIGKILL'));
    const produce = (partition: number, line: string) =>
      booblik(['produce', 'grows', '--partition', String(partition), '--broker', broker], {
        input: `${line}\n`,
      });
    assert.equal((await produce(0, 'in the first partition')).code, 0);
    await child.stdoutContains('in the first partition');
    const grown = await booblik(['topics', 'apply', '-f', '-', '--broker', broker], {
      input: 'name: grows\npartitions: 3\n',
    });
    assert.equal(grown.code, 0, grown.stderr);
    assert.equal((await produce(2, 'in a new partition')).code, 0);
    const seen = await child.stdoutContains('in a new partition');
    child.kill('SIGINT');
    assert.equal((await child.finished).code, 0);
    assert.deepEqual(
      lines(Buffer.from(seen)).map((r) => [r.partition, r.offset, r.payload]),
      [
        [0, 0, 'in the first partition'],
        [2, 0, 'in a new partition'],
      ],
    );
  });

  it('the topic deleted while following: exit 1 saying so, not an error code', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=doomed:2,other:1'] }))
      .address;
    const child = start([process.execPath, booblikMain, 'consume', 'doomed', '--follow', '--broker', broker]);
    t.after(() => child.kill('SIGKILL'));
    assert.equal((await booblik(['produce', 'doomed', '--broker', broker], { input: 'x\n' })).code, 0);
    await child.stdoutContains('x\n');
    assert.equal((await booblik(['topics', 'delete', 'doomed', '--broker', broker])).code, 0);
    const run = await child.finished;
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'booblik: topic doomed was deleted while it was being read: nothing more will arrive\n',
    );
  });
});
