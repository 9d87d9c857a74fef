import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { Connection, FragmentLocation } from '@booblik/client';
import { BrokerProcess } from '@booblik/testkit';
import { booblik, booblikMain, start } from '../test-support/spawn.js';

function tempFile(t: TestContext, name: string, text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cli-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

async function listJson(broker: string) {
  const run = await booblik(['topics', 'list', '--format', 'json', '--broker', broker]);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout.toString()) as {
    name: string;
    partitions: number;
    labels: Record<string, string>;
    revision: number;
  }[];
}

describe('booblik topics', () => {
  it('watch -l prints again only when the matching listing changes, not on a change to another topic', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=other:1'] })).address;
    const watching = start([
      process.execPath,
      booblikMain,
      'topics',
      'watch',
      '-l',
      'team=web',
      '--format',
      'json',
      '--broker',
      broker,
    ]);
    await watching.stdoutContains('"topics":[]');
    const unrelated = tempFile(t, 'unrelated.yaml', 'name: other\npartitions: 2\nlabels: {team: db}\n');
    assert.equal((await booblik(['topics', 'apply', '-f', unrelated, '--broker', broker])).code, 0);
    const matching = tempFile(t, 'matching.yaml', 'name: clicks\npartitions: 1\nlabels: {team: web}\n');
    assert.equal((await booblik(['topics', 'apply', '-f', matching, '--broker', broker])).code, 0);
    const seen = await watching.stdoutContains('"clicks"');
    watching.kill('SIGINT');
    assert.equal((await watching.finished).code, 0);
    const lines = seen
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { topics: { name: string }[] });
    assert.deepEqual(
      lines.map((l) => l.topics.map((x) => x.name)),
      [[], ['clicks']],
      'no line for the change to "other", which does not match',
    );
  });

  it('a file of one spec creates the topic, then updates it as it is; list --format json is one array', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=default:1'] })).address;
    const file = tempFile(t, 'orders.yaml', 'name: orders\npartitions: 3\nlabels: {team: payments}\n');
    const created = await booblik(['topics', 'apply', '-f', file, '--broker', broker]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(
      created.stdout.toString(),
      /create orders: 3 partition\(s\), labels team=payments\napplied 1 change\(s\): revision 2/,
    );
    fs.writeFileSync(file, 'name: orders\npartitions: 4\nlabels: {team: payments}\n');
    const updated = await booblik(['topics', 'apply', '-f', file, '--broker', broker]);
    assert.match(updated.stdout.toString(), /update orders \(revision 2\): partitions 3 -> 4/);
    const listed = await listJson(broker);
    assert.deepEqual(
      listed.map(({ name, partitions, labels, revision }) => ({ name, partitions, labels, revision })),
      [
        { name: 'default', partitions: 1, labels: {}, revision: 1 },
        { name: 'orders', partitions: 4, labels: { team: 'payments' }, revision: 3 },
      ],
    );
    const selected = await booblik(['topics', 'list', '-l', 'team=payments', '--broker', broker]);
    assert.match(
      selected.stdout.toString(),
      /^NAME +PARTITIONS +REVISION +LABELS +FLAGS\norders +4 +3 +team=payments +-\n$/,
    );
  });

  it('a tree applies all or nothing; a stale revision on a leaf fails naming the topic; --dry-run changes nothing', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=default:1'] })).address;
    const tree = tempFile(
      t,
      'tree.yaml',
      'labels: {team: web}\npartitions: 2\nchildren:\n  - name: clicks\n  - name: views\n    partitions: 5\n',
    );
    const dry = await booblik(['topics', 'apply', '-f', tree, '--dry-run', '--broker', broker]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout.toString(),
      /create clicks: 2 partition\(s\), labels team=web\ncreate views: 5 partition\(s\)/,
    );
    assert.match(dry.stdout.toString(), /dry run: .* nothing changed/);
    assert.deepEqual(
      (await listJson(broker)).map((x) => x.name),
      ['default'],
    );
    assert.equal((await booblik(['topics', 'apply', '-f', tree, '--broker', broker])).code, 0);
    const stale = tempFile(
      t,
      'stale.yaml',
      'partitions: 2\nchildren:\n  - name: clicks\n    revision: 1\n  - name: fresh\n',
    );
    const refused = await booblik(['topics', 'apply', '-f', stale, '--broker', broker]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /topic clicks is at revision 2, the change expected 1/);
    assert.deepEqual(
      (await listJson(broker)).map((x) => x.name),
      ['clicks', 'default', 'views'],
      'nothing of the refused file was applied',
    );
  });

  it('edit opens the spec in $EDITOR and applies the saved file at the revision shown', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=edited:1'] })).address;
    const editor = tempFile(
      t,
      'editor.sh',
      '#!/bin/sh\nsed -i -e "s/^partitions: 1$/partitions: 2/" -e "s/^labels: {}$/labels: {owner: me}/" "$1"\n',
    );
    fs.chmodSync(editor, 0o755);
    const run = await booblik(['topics', 'edit', 'edited', '--broker', broker], {
      env: { EDITOR: editor, VISUAL: '' },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout.toString(), /updated edited: revision 2/);
    const [spec] = await listJson(broker);
    assert.deepEqual([spec!.partitions, spec!.labels], [2, { owner: 'me' }]);
    const cancelled = await booblik(['topics', 'edit', 'edited', '--broker', broker], {
      env: { EDITOR: 'true', VISUAL: '' },
    });
    assert.match(cancelled.stdout.toString(), /cancelled: nothing changed/);
    const missing = await booblik(['topics', 'edit', 'nope', '--broker', broker], {
      env: { EDITOR: 'true' },
    });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no topic nope/);
  });

  it('edit refused for a stale revision keeps the edit in a file it names, and says how to apply it', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=edited:1'] })).address;
    const meanwhile = tempFile(
      t,
      'meanwhile.yaml',
      'name: edited\npartitions: 1\nlabels: {by: someone-else}\n',
    );
    // While the user edits, someone else changes the topic: the revision the edit was made at is stale.
    const editor = tempFile(
      t,
      'editor.sh',
      `#!/bin/sh\n"${process.execPath}" "${booblikMain}" topics apply -f "${meanwhile}" --broker ${broker} >/dev/null || exit 9\n` +
        'sed -i -e "s/^partitions: 1$/partitions: 3/" "$1"\n',
    );
    fs.chmodSync(editor, 0o755);
    const run = await booblik(['topics', 'edit', 'edited', '--broker', broker], {
      env: { EDITOR: editor, VISUAL: '' },
    });
    assert.equal(run.code, 1, run.stderr);
    const kept = /your edit is kept in (\S+\.yaml);/.exec(run.stderr)?.[1];
    assert.ok(kept, run.stderr);
    t.after(() => fs.rmSync(path.dirname(kept), { recursive: true, force: true }));
    assert.match(fs.readFileSync(kept, 'utf8'), /^partitions: 3$/m, 'the edit itself is in the file');
    assert.match(run.stderr, /changed while you edited it \(revision 1, now 2\).*set its revision to 2/);
    const [spec] = await listJson(broker);
    assert.deepEqual(
      [spec!.partitions, spec!.labels],
      [1, { by: 'someone-else' }],
      'nothing of the edit applied',
    );
  });

  it('list cuts a 249-character name in the table, so other rows stay readable; json keeps it whole', async (t) => {
    const long = 'n'.repeat(249);
    const broker = (await BrokerProcess.start(t, { http: false, flags: [`--topics=${long}:1,short:2`] }))
      .address;
    const table = await booblik(['topics', 'list', '--broker', broker]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.toString().trimEnd().split('\n');
    assert.ok(
      lines.every((l) => l.length < 100),
      `no row is padded to the long name:\n${lines.join('\n')}`,
    );
    assert.match(lines[1]!, /^n+… +1 +/);
    assert.deepEqual(
      (await listJson(broker)).map((x) => x.name),
      [long, 'short'],
    );
  });

  it('delete removes every named topic, or none when one is missing; delete --dry-run removes none', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=a:1,b:1,c:1'] })).address;
    const none = await booblik(['topics', 'delete', 'a', 'nope', '--broker', broker]);
    assert.equal(none.code, 1);
    assert.deepEqual(
      (await listJson(broker)).map((x) => x.name),
      ['a', 'b', 'c'],
    );
    const dry = await booblik(['topics', 'delete', 'a', 'b', '--dry-run', '--broker', broker]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout.toString(), /would delete a\nwould delete b\ndry run: .*nothing changed/);
    assert.deepEqual(
      (await listJson(broker)).map((x) => x.name),
      ['a', 'b', 'c'],
      '--dry-run deleted nothing',
    );
    const run = await booblik(['topics', 'delete', 'a', 'b', '--broker', broker]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      (await listJson(broker)).map((x) => x.name),
      ['c'],
    );
  });

  it("delete leaves a topic's history in its store, and a topic created again continues it; --purge-store removes it, --dry-run nothing", async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=default:1'] })).address;
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cli-store-'));
    t.after(() => fs.rmSync(storeDir, { recursive: true, force: true }));
    const file = tempFile(
      t,
      'stored.yaml',
      `store: file://${storeDir}\nsegmentBytes: 1024\npartitions: 1\nchildren:\n  - name: kept\n  - name: purged\n`,
    );
    assert.equal((await booblik(['topics', 'apply', '-f', file, '--broker', broker])).code, 0);
    const c = await Connection.connect(broker);
    t.after(() => c.close());
    const records = Array.from({ length: 20 }, (_, i) => Buffer.from(`record ${i} ${'x'.repeat(200)}`));
    for (const topic of ['kept', 'purged']) await c.produce(topic, 0, records);
    // Bounded: uploads run about once a second.
    const deadline = Date.now() + 30_000;
    const persistedEnd = async (topic: string) =>
      (await c.listFragments(topic, 0))[0]!.fragments
        .filter((f) => f.location === FragmentLocation.BOTH)
        .at(-1)?.endOffset ?? 0;
    while ((await persistedEnd('kept')) === 0 || (await persistedEnd('purged')) === 0) {
      assert.ok(Date.now() < deadline, 'closed segments uploaded within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const keptEnd = await persistedEnd('kept');
    // A topic applied again waits for its deletion's removals, the store's included: its offsets say what is left.
    const recreatedEnd = async (topic: string) => {
      const yaml = tempFile(t, `${topic}.yaml`, `name: ${topic}\npartitions: 1\nstore: file://${storeDir}\n`);
      assert.equal((await booblik(['topics', 'apply', '-f', yaml, '--broker', broker])).code, 0);
      return (await c.metadata(topic))[0]!.partitions[0]!.highWatermark;
    };

    const plain = await booblik(['topics', 'delete', 'kept', '--broker', broker]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stdout.toString(),
      /deleted kept \(its objects stay in store file:\/\/.*--purge-store removes them\)/,
    );
    assert.equal(
      await recreatedEnd('kept'),
      keptEnd,
      'created again, it continues the history left in the store',
    );

    const dry = await booblik([
      'topics',
      'delete',
      'purged',
      '--purge-store',
      '--dry-run',
      '--broker',
      broker,
    ]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout.toString(),
      /would delete purged and its history in store file:\/\/.*\ndry run: .*nothing changed/,
    );
    assert.ok((await c.listTopics('name=purged')).topics.length === 1, 'the dry run deleted nothing');

    const purged = await booblik(['topics', 'delete', 'purged', '--purge-store', '--broker', broker]);
    assert.equal(purged.code, 0, purged.stderr);
    assert.match(purged.stdout.toString(), /deleted purged and its history in store file:\/\//);
    assert.equal(await recreatedEnd('purged'), 0, 'created again after a purge, it starts empty');
  });

  it('watch prints the listing, then again on a change, and Ctrl-C ends it with exit 0', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=w:1'] })).address;
    const watching = start([
      process.execPath,
      booblikMain,
      'topics',
      'watch',
      '--format',
      'json',
      '--broker',
      broker,
    ]);
    await watching.stdoutContains('"revision":1');
    const file = tempFile(t, 'new.yaml', 'name: added\npartitions: 1\n');
    assert.equal((await booblik(['topics', 'apply', '-f', file, '--broker', broker])).code, 0);
    const seen = await watching.stdoutContains('"revision":2');
    watching.kill('SIGINT');
    const done = await watching.finished;
    assert.equal(done.code, 0, done.stderr);
    const lines = seen
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.topics.map((x: { name: string }) => x.name)),
      [['w'], ['added', 'w']],
    );
  });
});
