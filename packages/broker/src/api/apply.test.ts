import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  decodeApplyResponse,
  decodeInvalidArgument,
  decodeListResponse,
  decodeRevisionMismatch,
  ErrorCode,
  type TopicChange,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { fetched, metadataOf, produced, RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

const upsert = (
  name: string,
  partitions: number,
  revision = -1,
  labels: Record<string, string> = {},
): TopicChange => ({
  op: 'upsert',
  spec: topicSpecWithDefaults({ name, partitions, revision, labels }),
});
const revisionOf = (f: { body: Buffer }) => decodeApplyResponse(f.body).revision;

describe('APPLY', () => {
  it('creates a topic that is served at once, and its spec carries the new revision', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const before = decodeListResponse((await c.list()).body).revision;
    const answer = await c.apply([upsert('orders', 2, 0, { team: 'payments' })]);
    assert.equal(answer.errorCode, ErrorCode.NONE);
    assert.equal(revisionOf(answer), before + 1);
    const p = await c.produce({
      topic: 'orders',
      partition: 1,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('x')],
    });
    assert.deepEqual(produced(p), { baseOffset: 0, logEndOffset: 1 });
    const listed = decodeListResponse((await c.list('team=payments')).body);
    assert.deepEqual(
      listed.topics.map((x) => [x.spec.name, x.spec.partitions, x.spec.revision]),
      [['orders', 2, before + 1]],
    );
  });

  it('CAS: 0 on an existing topic and a stale revision are refused, naming the topic and both revisions', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const r1 = revisionOf(await c.apply([upsert('a', 1, 0)]));
    const exists = await c.apply([upsert('a', 1, 0)]);
    assert.equal(exists.errorCode, ErrorCode.REVISION_MISMATCH);
    assert.deepEqual(decodeRevisionMismatch(exists.body), {
      changeIndex: 0,
      topic: 'a',
      expectedRevision: 0,
      actualRevision: r1,
    });
    const r2 = revisionOf(await c.apply([upsert('a', 2, r1)]));
    const stale = await c.apply([upsert('a', 3, r1)]);
    assert.equal(stale.errorCode, ErrorCode.REVISION_MISMATCH);
    assert.deepEqual(decodeRevisionMismatch(stale.body), {
      changeIndex: 0,
      topic: 'a',
      expectedRevision: r1,
      actualRevision: r2,
    });
    const del = await c.apply([{ op: 'delete', name: 'a', expectedRevision: r1 }]);
    assert.equal(del.errorCode, ErrorCode.REVISION_MISMATCH, 'a delete checks its revision too');
  });

  it('CAS: two clients applying with the same revision, exactly one wins', async (t) => {
    const { port } = await startBroker(t);
    const [c1, c2] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
    t.after(() => {
      c1.close();
      c2.close();
    });
    const r = revisionOf(await c1.apply([upsert('race', 1, 0)]));
    for (let round = 0; round < 10; round++) {
      const current = decodeListResponse((await c1.list('name=race')).body).topics[0]!.spec.revision;
      const answers = await Promise.all([
        c1.apply([upsert('race', 1 + round, current, { winner: 'one' })]),
        c2.apply([upsert('race', 1 + round, current, { winner: 'two' })]),
      ]);
      const codes = answers.map((a) => a.errorCode).sort();
      assert.deepEqual(codes, [ErrorCode.NONE, ErrorCode.REVISION_MISMATCH], `round ${round}`);
    }
    assert.ok(r > 0);
  });

  it('all or nothing: one bad change among good ones changes nothing', async (t) => {
    const { port, dataDir } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const before = await c.list();
    const specFile = fs.readFileSync(path.join(dataDir, 'topics.json'));
    const invalid = await c.apply([upsert('new1', 1), upsert('t', 1), upsert('new2', 1)]);
    assert.equal(invalid.errorCode, ErrorCode.INVALID_ARGUMENT);
    assert.deepEqual(decodeInvalidArgument(invalid.body), {
      index: 1,
      message: 'changes[1].partitions: 1, expected >= 3 (partitions may grow, never shrink)',
    });
    const mismatch = await c.apply([upsert('new1', 1), { op: 'delete', name: 't', expectedRevision: 0 }]);
    assert.equal(mismatch.errorCode, ErrorCode.REVISION_MISMATCH);
    const twice = await c.apply([upsert('new1', 1), upsert('new1', 2)]);
    assert.match(decodeInvalidArgument(twice.body).message, /changes\[1\].name: new1 is changed twice/);
    assert.deepEqual((await c.list()).body, before.body, 'the listing and revision did not move');
    assert.deepEqual(
      fs.readFileSync(path.join(dataDir, 'topics.json')),
      specFile,
      'the spec file did not change',
    );
    assert.equal((await c.metadata('new1')).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(fs.existsSync(path.join(dataDir, 'new1-0')), false, 'no partition was created');
  });

  it('refuses what one broker cannot do and a field out of range, naming the field', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const cases: [TopicChange, RegExp][] = [
      [
        { op: 'upsert', spec: { ...topicSpecWithDefaults({ name: 'x', partitions: 1 }), replication: 3 } },
        /changes\[0\].replication: 3, expected 1 on a single broker/,
      ],
      [
        {
          op: 'upsert',
          spec: { ...topicSpecWithDefaults({ name: 'x', partitions: 1 }), storeUrl: 's3://B/p' },
        },
        /changes\[0\].storeUrl: store url "s3:\/\/B\/p": bucket: "B" is not a bucket name/,
      ],
      [
        {
          op: 'upsert',
          spec: { ...topicSpecWithDefaults({ name: 't', partitions: 3 }), storeUrl: 'file:///tmp' },
        },
        /changes\[0\].storeUrl: "file:\/\/\/tmp", expected "" \(a topic's store is set when it is created\)/,
      ],
      [
        upsert('x', 1, -1, { compression: 'zstd' }),
        /changes\[0\].labels.compression: "zstd", expected one of none, gzip/,
      ],
      [upsert('x', 0), /changes\[0\].partitions: 0, expected 1\.\.10000/],
      [upsert('x', 1, -1, { 'booblik.x': 'y' }), /changes\[0\].labels: key "booblik.x" is reserved/],
      [{ op: 'delete', name: 'a b', expectedRevision: -1 }, /changes\[0\].name: "a b" has a character/],
    ];
    for (const [change, message] of cases) {
      const answer = await c.apply([change]);
      assert.equal(answer.errorCode, ErrorCode.INVALID_ARGUMENT);
      assert.match(decodeInvalidArgument(answer.body).message, message);
    }
  });

  it("a name that fits the protocol but not the data directory's file system is refused, naming the field, the bytes and the limit", async (t) => {
    const { port, broker, dataDir } = await startBroker(t);
    const limit = broker.partitions.dirNameBytesMax;
    const tooLong = 'ü'.repeat(200); // 200 characters, 400 bytes in UTF-8: "<name>-0" is 402
    if (Buffer.byteLength(`${tooLong}-0`) <= limit)
      return t.skip(`this file system takes ${limit}-byte names`);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    for (const dryRun of [true, false]) {
      const answer = await c.apply([upsert(tooLong, 1)], dryRun);
      assert.equal(answer.errorCode, ErrorCode.INVALID_ARGUMENT);
      assert.match(
        decodeInvalidArgument(answer.body).message,
        new RegExp(
          `^changes\\[0\\]\\.name: "ü{40}\\.\\.\\." needs a partition directory of 402 bytes in UTF-8 \\("<name>-0"\\), expected at most ${limit} `,
        ),
      );
    }
    assert.deepEqual(
      fs.readdirSync(dataDir).filter((f) => f.startsWith('ü')),
      [],
      'no directory was made',
    );
    // At the limit it fits; one partition more, and the suffix "-10" passes it.
    const atLimit = `${'ü'.repeat(Math.floor((limit - 2) / 2))}${(limit - 2) % 2 === 1 ? 'a' : ''}`;
    assert.equal(Buffer.byteLength(`${atLimit}-9`), limit);
    assert.equal((await c.apply([upsert(atLimit, 10)])).errorCode, ErrorCode.NONE);
    assert.equal(metadataOf(await c.metadata(atLimit))[0]!.partitions.length, 10);
    const grown = await c.apply([upsert(atLimit, 11)]);
    assert.equal(grown.errorCode, ErrorCode.INVALID_ARGUMENT);
    assert.match(
      decodeInvalidArgument(grown.body).message,
      /needs a partition directory of \d+ bytes in UTF-8 \("<name>-10"\)/,
    );
    assert.equal((await c.metadata('t')).errorCode, ErrorCode.NONE, 'the broker serves on');
  });

  it('dry run checks everything and changes nothing', async (t) => {
    const { port } = await startBroker(t);
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    const revision = decodeListResponse((await c.list()).body).revision;
    const answer = await c.apply([upsert('dry', 1, 0)], true);
    assert.equal(revisionOf(answer), revision);
    assert.equal((await c.metadata('dry')).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await c.apply([upsert('t', 1)], true)).errorCode, ErrorCode.INVALID_ARGUMENT);
  });

  it('partitions grow at runtime; the old ones keep their records', async (t) => {
    const { port } = await startBroker(t, { topics: [{ name: 'g', partitions: 1 }] });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    await c.produce({ topic: 'g', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('kept')] });
    assert.equal((await c.apply([upsert('g', 3)])).errorCode, ErrorCode.NONE);
    assert.deepEqual(
      metadataOf(await c.metadata('g'))[0]!.partitions.map((p) => [p.partition, p.highWatermark]),
      [
        [0, 1],
        [1, 0],
        [2, 0],
      ],
    );
    assert.deepEqual(fetched(await c.fetch({ topic: 'g', partition: 0, fetchOffset: 0 }), 0).records, [
      'kept',
    ]);
  });

  it('a read-only topic refuses PRODUCE and still serves FETCH', async (t) => {
    const { port } = await startBroker(t, { topics: [{ name: 'ro', partitions: 1 }] });
    const c = await RawClient.connect(port);
    t.after(() => c.close());
    await c.produce({ topic: 'ro', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('before')] });
    const spec = { ...topicSpecWithDefaults({ name: 'ro', partitions: 1 }), flags: 1 };
    assert.equal((await c.apply([{ op: 'upsert', spec }])).errorCode, ErrorCode.NONE);
    const refused = await c.produce({
      topic: 'ro',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('x')],
    });
    assert.equal(refused.errorCode, ErrorCode.TOPIC_READ_ONLY);
    assert.deepEqual(fetched(await c.fetch({ topic: 'ro', partition: 0, fetchOffset: 0 }), 0).records, [
      'before',
    ]);
  });

  it('specs survive a restart; booblik.topics creates what is missing and never deletes', async (t) => {
    const first = await startBroker(t, { topics: [{ name: 'configured', partitions: 1 }] });
    const c = await RawClient.connect(first.port);
    await c.apply([upsert('applied', 2, 0, { team: 'x' })]);
    c.close();
    await first.broker.close();
    const second = await startBroker(t, {
      dataDir: first.dataDir,
      topics: [
        { name: 'other', partitions: 1 },
        { name: 'configured', partitions: 4 },
      ],
    });
    const c2 = await RawClient.connect(second.port);
    t.after(() => c2.close());
    const listed = decodeListResponse((await c2.list()).body).topics.map((x) => [
      x.spec.name,
      x.spec.partitions,
    ]);
    assert.deepEqual(
      listed,
      [
        ['applied', 2],
        ['configured', 1],
        ['other', 1],
      ],
      'the stored spec is served',
    );
    assert.ok(
      second.lines.some((l) =>
        /WARN booblik.topics names configured:4, its stored spec has 1 partition/.test(l),
      ),
      'the difference is logged',
    );
    fs.rmSync(first.dataDir, { recursive: true, force: true });
  });
});
