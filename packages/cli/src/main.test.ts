import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { ApiKey, FakeBroker, MemoryLog } from '@booblik/client/testing';
import { booblik, booblikMain, start } from './test-support/spawn.js';

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

const texts = (records: Buffer[]) => records.map((r) => r.toString());

/** Length-prefixed input: int32 big-endian length, then the bytes. */
function prefixed(records: Buffer[]): Buffer {
  return Buffer.concat(
    records.flatMap((r) => {
      const len = Buffer.alloc(4);
      len.writeInt32BE(r.length, 0);
      return [len, r];
    }),
  );
}

describe('booblik metadata', () => {
  it('prints one row per partition with log start and high watermark', async () => {
    const { log, broker } = await serve({ orders: 2, audit: 1 });
    log.append('orders', 1, [Buffer.from('x'), Buffer.from('y')]);
    const run = await booblik(['metadata', '--broker', broker.address]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout.toString(),
      [
        'TOPIC   PARTITION  LOG_START  HIGH_WATERMARK',
        'audit   0          0          0',
        'orders  0          0          0',
        'orders  1          0          2',
        '',
      ].join('\n'),
    );
  });

  it('reads the broker from BOOBLIK_BROKER, and an unknown topic is exit 1 naming the refusal', async () => {
    const { broker } = await serve({ orders: 1 });
    const run = await booblik(['metadata', 'nope'], { env: { BOOBLIK_BROKER: broker.address } });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /UNKNOWN_TOPIC_OR_PARTITION/);
    assert.equal(run.stdout.length, 0);
  });
});

describe('booblik --broker with several brokers', () => {
  it('a comma-separated list is tried in turn: an unreachable first broker is skipped', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, [Buffer.from('x')]);
    const list = `127.0.0.1:1,${broker.address}`;
    const metadata = await booblik(['metadata', '--broker', list]);
    assert.equal(metadata.code, 0, metadata.stderr);
    assert.match(metadata.stdout.toString(), /^t +0 +0 +1$/m);
    const consume = await booblik(['consume', 't'], { env: { BOOBLIK_BROKER: list } });
    assert.equal(consume.code, 0, consume.stderr);
    assert.equal(consume.stdout.toString(), 'x\n');
  });

  it('none reachable is exit 1 naming every broker tried; an empty entry is a usage error', async () => {
    const none = await booblik(['metadata', '--broker', '127.0.0.1:1,127.0.0.1:2']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /cannot connect to any of 127\.0\.0\.1:1, 127\.0\.0\.1:2 \(.*ECONNREFUSED/);
    const empty = await booblik(['metadata', '--broker', '127.0.0.1:1,']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--broker: "127\.0\.0\.1:1," \(address 2 of 2\) is empty, expected host:port/);
  });
});

describe('booblik produce', () => {
  it('one record per line, in order; empty lines are skipped and counted', async () => {
    const { log, broker } = await serve({ t: 1 });
    const run = await booblik(['produce', 't', '--broker', broker.address], {
      input: 'a\nb\n\nc with spaces\nlast',
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(texts(log.records('t', 0)), ['a', 'b', 'c with spaces', 'last']);
    assert.match(run.stderr, /skipped 1 empty record/);
  });

  it('ends with one summary line on stderr (records, first and last offset) when stderr is not a terminal', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, [Buffer.from('earlier')]);
    const run = await booblik(['produce', 't', '--broker', broker.address], { input: 'a\nb\nc\n' });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, 'produced 3 record(s) to t: partition 0 offsets 1..3\n');
  });

  it('the summary gives each partition its own offsets when keyless records spread out', async () => {
    const { log, broker } = await serve({ t: 2 });
    const run = await booblik(['produce', 't', '--broker', broker.address], { input: 'a\nb\nc\nd\ne\n' });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      [texts(log.records('t', 0)), texts(log.records('t', 1))],
      [
        ['a', 'c', 'e'],
        ['b', 'd'],
      ],
    );
    assert.equal(
      run.stderr,
      'produced 5 record(s) to t: partition 0 offsets 0..2, partition 1 offsets 0..1\n',
    );
  });

  it('an unknown topic is exit 1 naming the topic, before any record is read', async () => {
    const { broker } = await serve({ t: 1 });
    const run = await booblik(['produce', 'nope', '--broker', broker.address], { input: 'x\n' });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /topic nope does not exist/);
  });

  it('a bad topic name is exit 2 naming the character not allowed, and nothing reaches the broker', async () => {
    const { broker } = await serve({ t: 1 });
    const run = await booblik(['produce', 'orders/eu', '--broker', broker.address], { input: 'x\n' });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /topic "orders\/eu" has a character other than .*: "\/" at character 7/);
    assert.doesNotMatch(run.stderr, /CORRUPT_REQUEST/);
    assert.deepEqual(broker.received, []);
    const consume = await booblik(['consume', 'a b', '--broker', broker.address]);
    assert.equal(consume.code, 2);
    assert.match(consume.stderr, /topic "a b" has a character other than .*: " " at character 2/);
  });

  it('many records go in batches, not one request per record, and none is lost', async () => {
    const { log, broker } = await serve({ t: 1 });
    const lines = Array.from({ length: 2000 }, (_, i) => `record-${i}`);
    const run = await booblik(['produce', 't', '--partition', '0', '--broker', broker.address], {
      input: `${lines.join('\n')}\n`,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(texts(log.records('t', 0)), lines);
    const produces = broker.received.filter((r) => r.apiKey === ApiKey.PRODUCE).length;
    assert.ok(produces <= 2000 / 10, `${produces} PRODUCE requests for 2000 records`);
  });

  it('--key sends every record to the partition FNV-1a picks (golden vector "user-1" is p3=1)', async () => {
    const { log, broker } = await serve({ t: 3 });
    const run = await booblik(['produce', 't', '--key', 'user-1', '--broker', broker.address], {
      input: 'x\ny\n',
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(texts(log.records('t', 1)), ['x', 'y']);
  });

  it('--length-prefixed carries any bytes, newlines included', async () => {
    const { log, broker } = await serve({ t: 1 });
    const records = [Buffer.from('two\nlines'), Buffer.from([0, 255, 10, 13])];
    const run = await booblik(['produce', 't', '--length-prefixed', '--broker', broker.address], {
      input: prefixed(records),
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(log.records('t', 0), records);
  });

  it('--length-prefixed input cut inside a record is exit 1, and the whole records before it are sent', async () => {
    const { log, broker } = await serve({ t: 1 });
    const input = prefixed([Buffer.from('whole'), Buffer.from('cut short')]);
    const run = await booblik(['produce', 't', '--length-prefixed', '--broker', broker.address], {
      input: input.subarray(0, input.length - 2),
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /input ends inside record 2/);
    assert.deepEqual(texts(log.records('t', 0)), ['whole']);
  });

  it('a record of exactly the most one can hold is sent; one byte more is refused with that exact limit', async () => {
    const { log, broker } = await serve({ t: 1 });
    const most = 8_388_570; // what one FETCH answer returns whole
    const sent = await booblik(['produce', 't', '--broker', broker.address], {
      input: `${'a'.repeat(most)}\n`,
    });
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(log.records('t', 0)[0]?.length, most);
    const refused = await booblik(['produce', 't', '--broker', broker.address], {
      input: `ok\n${'a'.repeat(most + 1)}\n`,
    });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /line 2 is longer than 8388570 bytes, the most one record can hold/);
    assert.equal(log.records('t', 0).length, 2, 'the line before it was sent, the long one not');
  });

  it('--ack none returns without answers and the records still arrive', async () => {
    const { log, broker } = await serve({ t: 1 });
    const run = await booblik(['produce', 't', '--ack', 'none', '--broker', broker.address], {
      input: 'p\nq\n',
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(texts(log.records('t', 0)), ['p', 'q']);
  });

  it('a partition that does not exist is exit 1 with the refusal and the count of failed records', async () => {
    const { broker } = await serve({ t: 3 });
    const run = await booblik(['produce', 't', '--partition', '5', '--broker', broker.address], {
      input: 'x\n',
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /1 of 1 record\(s\) failed.*UNKNOWN_TOPIC_OR_PARTITION/);
  });
});

describe('booblik consume', () => {
  const payloads = ['zero', 'one', 'two', 'three'].map((s) => Buffer.from(s));

  it('prints every record from the earliest and stops at the high watermark', async () => {
    const { log, broker } = await serve({ t: 2 });
    log.append('t', 1, payloads);
    const run = await booblik(['consume', 't', '--partition', '1', '--broker', broker.address]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.toString(), 'zero\none\ntwo\nthree\n');
    const fetches = broker.received.filter((r) => r.apiKey === ApiKey.FETCH);
    assert.ok(
      fetches.every((f) => f.apiKey === ApiKey.FETCH && f.body.maxWaitMs === 0),
      'no long wait at a known end',
    );
  });

  it('--from, --max-records and --format hex / json', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, [...payloads, Buffer.from([0xff])]);
    const hex = await booblik([
      'consume',
      't',
      '--from',
      '1',
      '--max-records',
      '2',
      '--format',
      'hex',
      '--broker',
      broker.address,
    ]);
    assert.equal(hex.stdout.toString(), '6f6e65\n74776f\n');
    const json = await booblik([
      'consume',
      't',
      '--from',
      '3',
      '--format',
      'json',
      '--broker',
      broker.address,
    ]);
    assert.equal(
      json.stdout.toString(),
      '{"topic":"t","partition":0,"offset":3,"payload":"three"}\n' +
        '{"topic":"t","partition":0,"offset":4,"payloadBase64":"/w=="}\n',
    );
    const latest = await booblik(['consume', 't', '--from', 'latest', '--broker', broker.address]);
    assert.equal(latest.code, 0);
    assert.equal(latest.stdout.length, 0);
  });

  it('a partition the topic lacks is exit 1 saying which partitions it has', async () => {
    const { broker } = await serve({ t: 1 });
    const run = await booblik(['consume', 't', '--partition', '5', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /topic t has no partition 5 \(it has partitions 0\.\.0\)/);
  });

  it('an offset past the high watermark is exit 1 saying the range', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, payloads);
    const run = await booblik(['consume', 't', '--from', '9', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /offset 9 is outside the partition's range 0..4/);
  });

  it('a record larger than --max-bytes is exit 1 naming its offset and size, not an endless wait', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, [Buffer.from('small'), Buffer.alloc(500, 0x61)]);
    const run = await booblik(['consume', 't', '--max-bytes', '100', '--broker', broker.address]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout.toString(), 'small\n');
    assert.match(
      run.stderr,
      /offset 1 holds 500 bytes, 508 with its 8-byte header; .*with --max-bytes 100: raise --max-bytes to at least 508\n/,
    );
  });

  it('--max-bytes of exactly payload + 8 reads the record the refusal was about', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, [Buffer.alloc(500, 0x61)]);
    const tight = await booblik(['consume', 't', '--max-bytes', '508', '--broker', broker.address]);
    assert.equal(tight.code, 0, tight.stderr);
    assert.equal(tight.stdout.toString(), `${'a'.repeat(500)}\n`);
    const short = await booblik(['consume', 't', '--max-bytes', '507', '--broker', broker.address]);
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 508/);
  });

  it('--follow waits for new records (a held long fetch) and prints them as they arrive', async () => {
    const { log, broker } = await serve({ t: 1 });
    log.append('t', 0, [Buffer.from('before')]);
    const child = start([process.execPath, booblikMain, 'consume', 't', '--follow', '--max-records', '3'], {
      env: { BOOBLIK_BROKER: broker.address },
    });
    await child.stdoutContains('before\n');
    // Wait until the follower's fetch past the end is held by the broker, then write.
    for (;;) {
      const r = await broker.nextArrival();
      if (r.apiKey === ApiKey.FETCH && r.body.fetchOffset === 1) {
        assert.ok(r.body.maxWaitMs > 0, 'a follower asks the broker to hold the fetch');
        break;
      }
    }
    log.append('t', 0, [Buffer.from('after 1'), Buffer.from('after 2')]);
    const run = await child.finished;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.toString(), 'before\nafter 1\nafter 2\n');
  });

  it('--follow stops cleanly on SIGINT with exit 0', async () => {
    const { broker } = await serve({ t: 1 });
    const child = start([process.execPath, booblikMain, 'consume', 't', '--follow'], {
      env: { BOOBLIK_BROKER: broker.address },
    });
    for (;;) if ((await broker.nextArrival()).apiKey === ApiKey.FETCH) break;
    child.kill('SIGINT');
    const run = await child.finished;
    assert.equal(run.code, 0, run.stderr);
  });
});

describe('booblik health', () => {
  it('exit 0 and one "healthy" line when METADATA is answered', async () => {
    const { broker } = await serve({ a: 1, b: 2 });
    const run = await booblik(['health', '--broker', broker.address]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout.toString(),
      /^healthy: 127\.0\.0\.1:\d+ answered METADATA in \d+ ms \(2 topics, 3 partitions\)\n$/,
    );
  });

  it('exit 1 with the reason when nothing listens', async () => {
    const { broker } = await serve({});
    const address = broker.address;
    await broker.close();
    const run = await booblik(['health', '--broker', address]);
    assert.equal(run.code, 1);
    assert.match(run.stdout.toString(), /^unhealthy: .*ECONNREFUSED/);
  });

  it('exit 1 within the timeout when the broker accepts but never answers', async () => {
    const silent = await FakeBroker.start(); // requests queue up unanswered
    brokers.push(silent);
    const run = await booblik(['health', '--timeout', '300', '--broker', silent.address]);
    assert.equal(run.code, 1);
    assert.match(run.stdout.toString(), /^unhealthy: .*no answer within 300 ms\n$/);
  });
});

describe('booblik usage errors', () => {
  const cases: [string, string[], RegExp][] = [
    ['no command', [], /no command given/],
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['an unknown flag', ['metadata', '--colour'], /--colour/],
    ['produce without a topic', ['produce'], /expected <topic>/],
    ['a bad ack', ['produce', 't', '--ack', 'maybe'], /--ack: "maybe", expected none, written or forced/],
    ['both key and partition', ['produce', 't', '--key', 'k', '--partition', '1'], /--key and --partition/],
    ['a bad partition', ['consume', 't', '--partition', 'x'], /--partition: "x"/],
    ['a bad format', ['consume', 't', '--format', 'xml'], /--format: "xml", expected text, hex, json/],
    ['a bad --from', ['consume', 't', '--from', 'abc'], /--from: "abc", expected earliest\|latest\|<offset>/],
    [
      'a --from of the last zero records',
      ['consume', 't', '--from', '-0'],
      /--from: "-0", expected earliest\|latest\|<offset>\|-<count>/,
    ],
    ['a --from with a fraction', ['consume', 't', '--from', '-1.5'], /--from: "-1.5", expected/],
    ['a flag without its value', ['consume', 't', '--from'], /--from needs a value/],
    ['a value given to a switch', ['consume', 't', '--follow=yes'], /--follow takes no value/],
    [
      'a misspelt option',
      ['consume', 't', '--frm', '3'],
      /booblik: unknown option --frm \(this command takes .*--from <value>.*\)\n/,
    ],
    ['a malformed --broker', ['metadata', '--broker', 'host:99999'], /--broker: address: "host:99999"/],
    ['an empty --prefer-zone', ['consume', 't', '--prefer-zone', ''], /--prefer-zone: expected a zone name/],
  ];
  for (const [what, args, message] of cases) {
    it(`${what} is exit 2 with a message saying what is wrong`, async () => {
      const run = await booblik(args, { env: { BOOBLIK_BROKER: '127.0.0.1:1' } });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.match(run.stderr, /booblik --help/);
      assert.doesNotMatch(
        run.stderr,
        /ambiguous|To specify|ERR_PARSE_ARGS/,
        "our message, not Node's parser",
      );
    });
  }

  it('--version prints the version of the package, exit 0', async () => {
    const { version } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const run = await booblik(['--version']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.toString(), `booblik ${version}\n`);
  });

  it('--help prints the usage and exits 0, for the command and for each verb', async () => {
    const main = await booblik(['--help']);
    assert.equal(main.code, 0);
    assert.match(main.stdout.toString(), /Usage: booblik <command>/);
    const consume = await booblik(['consume', '--help']);
    assert.equal(consume.code, 0);
    assert.match(consume.stdout.toString(), /--follow/);
  });
});
