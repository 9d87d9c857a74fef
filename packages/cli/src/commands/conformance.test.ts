import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { FakeBroker, MemoryLog } from '@booblik/client/testing';
import { readVectors } from '@booblik/protocol/testing';
import { BrokerProcess } from '@booblik/testkit';
import { conformanceClient, start } from '../test-support/spawn.js';

const brokers: FakeBroker[] = [];
after(async () => {
  for (const b of brokers) await b.close();
});

/** The broker the harness runs: `conformance` with 3 partitions, `single` with 1. */
async function serve(): Promise<{ log: MemoryLog; address: string }> {
  const log = new MemoryLog({ conformance: 3, single: 1 });
  const broker = await FakeBroker.start(log.handle);
  brokers.push(broker);
  return { log, address: broker.address };
}

/** Runs the executable exactly as the harness does; returns exit status and the key=value lines. */
async function client(
  address: string,
  ...args: string[]
): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const run = await start([conformanceClient, ...args], { env: { BOOBLIK_BROKER: address } }).finished;
  const text = run.stdout.toString();
  return { code: run.code, lines: text.length === 0 ? [] : text.trimEnd().split('\n'), stderr: run.stderr };
}

describe('conformance client (conformance/clients/typescript)', () => {
  it('capabilities needs no broker and declares its three roles', async () => {
    const run = await client('127.0.0.1:1', 'capabilities');
    assert.equal(run.code, 0);
    assert.deepEqual(run.lines, ['roles=producer,consumer', 'extras=topics', 'name=typescript']);
  });

  it('topics verbs create, list by label, print a stale revision with its details, and delete', async (t) => {
    const address = (await BrokerProcess.start(t, { http: false, flags: ['--topics=single:1'] })).address;
    const ok = async (...args: string[]) => {
      const run = await client(address, ...args);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      return run.lines;
    };
    const [created] = await ok('topics-apply', 't', '2', 'team=p,env=x', '0');
    const revision = Number(created?.replace('revision=', ''));
    assert.ok(revision > 0, created);
    assert.deepEqual(await ok('topics-list', 'team=p'), [
      `revision=${revision}`,
      `topic=t 2 ${revision} env=x,team=p`,
    ]);
    assert.deepEqual(await ok('topics-apply', 't', '3', '-', String(revision - 1)), [
      'error=REVISION_MISMATCH',
      'topic=t',
      `expectedRevision=${revision - 1}`,
      `actualRevision=${revision}`,
    ]);
    assert.deepEqual(await ok('topics-delete', 't', String(revision)), [`revision=${revision + 1}`]);
    assert.deepEqual(await ok('topics-list', 'team=p'), [`revision=${revision + 1}`]);
    assert.equal((await client(address, 'topics-apply', 't', '1', 'nolabel', '0')).code, 2);
  });

  it('metadata prints one partition line each, with log start and high watermark', async () => {
    const { log, address } = await serve();
    log.append('conformance', 2, [Buffer.from('x')]);
    const run = await client(address, 'metadata', 'conformance');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, ['partition=0 0 0', 'partition=1 0 0', 'partition=2 0 1']);
  });

  it('produce prints baseOffset and logEndOffset; every byte value arrives as sent', async () => {
    const { log, address } = await serve();
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const run = await client(address, 'produce', 'single', '0', 'written', `${all.toString('hex')},00,0a0b`);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, ['baseOffset=0', 'logEndOffset=3']);
    assert.deepEqual(log.records('single', 0), [all, Buffer.from([0]), Buffer.from([10, 11])]);
  });

  it('an empty record is sent as given, and the broker refusal is printed with exit 0', async () => {
    const { log, address } = await serve();
    const run = await client(address, 'produce', 'single', '0', 'written', '');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, ['error=CORRUPT_REQUEST']);
    assert.equal(log.records('single', 0).length, 0);
  });

  it('produce with none prints nothing, returns, and the record still arrives', async () => {
    const { log, address } = await serve();
    const run = await client(address, 'produce', 'single', '0', 'none', '6e6f6e65');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, []);
    assert.deepEqual(log.records('single', 0), [Buffer.from('none')]);
  });

  it('unknown topics and partitions are refusals (exit 0), not crashes', async () => {
    const { address } = await serve();
    for (const args of [
      ['metadata', 'nope'],
      ['produce', 'nope', '0', 'written', 'aa'],
      ['produce', 'single', '7', 'forced', 'aa'],
      ['produce-keyed', 'nope', 'aa', 'bb'],
      ['fetch', 'nope', '0', '0', '100'],
    ]) {
      const run = await client(address, ...args);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      assert.deepEqual(run.lines, ['error=UNKNOWN_TOPIC_OR_PARTITION'], args.join(' '));
    }
  });

  it('produce-keyed names the partition of the golden vectors (p3) and the record is really there', async () => {
    const { log, address } = await serve();
    const vectors = readVectors('partitioner-fnv1a.tsv');
    // One vector per partition, the empty key among them: enough to catch a wrong hash or modulo.
    const picked = [0, 1, 2].map((p) => vectors.find((v) => Number(v.p3) === p)!);
    picked.push(vectors.find((v) => v.name === 'empty')!);
    for (const v of picked) {
      const payload = Buffer.from(`for ${v.name}`).toString('hex');
      const run = await client(address, 'produce-keyed', 'conformance', v.keyHex!, payload);
      assert.equal(run.code, 0, run.stderr);
      const partition = Number(v.p3);
      const offset = log.records('conformance', partition).length - 1;
      assert.deepEqual(run.lines, [`partition=${partition}`, `baseOffset=${offset}`], v.name);
      assert.equal(log.records('conformance', partition)[offset]!.toString('hex'), payload);
    }
  });

  it('fetch prints the high watermark, then whole records only', async () => {
    const { log, address } = await serve();
    log.append('single', 0, [Buffer.alloc(100, 1), Buffer.alloc(100, 2), Buffer.alloc(100, 3)]);
    const all = await client(address, 'fetch', 'single', '0', '0', '1000');
    assert.deepEqual(all.lines, [
      'highWatermark=3',
      `record=${'01'.repeat(100)}`,
      `record=${'02'.repeat(100)}`,
      `record=${'03'.repeat(100)}`,
    ]);
    const cut = await client(address, 'fetch', 'single', '0', '0', '150');
    assert.deepEqual(cut.lines, ['highWatermark=3', `record=${'01'.repeat(100)}`]);
    const caughtUp = await client(address, 'fetch', 'single', '0', '3', '150');
    assert.deepEqual(caughtUp.lines, ['highWatermark=3']);
  });

  it('fetch of a record larger than maxBytes prints its size and no record', async () => {
    const { log, address } = await serve();
    log.append('single', 0, [Buffer.alloc(500, 7)]);
    const run = await client(address, 'fetch', 'single', '0', '0', '100');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, ['highWatermark=1', 'recordExceedsMaxBytes=500']);
  });

  it('fetch past the end is refused with OFFSET_OUT_OF_RANGE', async () => {
    const { address } = await serve();
    const run = await client(address, 'fetch', 'single', '0', '1000', '100');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, ['error=OFFSET_OUT_OF_RANGE']);
  });

  it('malformed arguments are exit 2 before any broker is dialed', async () => {
    for (const args of [
      ['produce', 'single', '0', 'written', 'abc'],
      ['produce', 'single', 'zero', 'written', 'aa'],
      ['produce', 'single', '0', 'sometimes', 'aa'],
      ['fetch', 'single', '0', '0'],
      ['nonsense'],
    ]) {
      const run = await client('127.0.0.1:1', ...args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    }
  });

  it('a client failure (no broker) is a non-zero exit, never a printed refusal', async () => {
    const run = await client('127.0.0.1:1', 'metadata', 'conformance');
    assert.equal(run.code, 1);
    assert.deepEqual(run.lines, []);
    assert.match(run.stderr, /cannot connect/);
  });
});
