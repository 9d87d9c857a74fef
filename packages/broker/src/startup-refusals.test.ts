import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AckPolicy, ErrorCode } from '@booblik/protocol';
import { startProcess, startUnderNonReapingParent, tempDir, waitUntil } from '@booblik/testkit';
import { LOCK_FILE_NAME } from './data-dir-lock.js';
import { fetched, produced, RawClient } from './test-support/raw-client.js';

/** Every entry under `dir` with its size and mtime: what "touched nothing" is checked against. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const full = path.join(d, name);
      const st = fs.statSync(full);
      out[path.relative(dir, full)] = `${st.size} B, mtime ${st.mtimeMs}`;
      if (st.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out;
}

/** Field 3 of /proc/<pid>/stat (R, S, Z, ...), or null once the pid is gone. */
function processState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** Holds a TCP port on 127.0.0.1 until the test ends. */
async function occupyPort(t: import('node:test').TestContext): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

/** A data directory a stopped broker left, holding `records`, with a torn half-record appended (a startup would cut it). */
async function stoppedDataDir(t: import('node:test').TestContext, records: string[]): Promise<string> {
  const dir = tempDir(t);
  const p = startProcess(['--port=0', '--http.port=-1', `--data.dir=${dir}`, '--topics=t:1']);
  const client = await RawClient.connect(await p.listening);
  await client.produce({
    topic: 't',
    partition: 0,
    ack: AckPolicy.FORCED,
    records: records.map((r) => Buffer.from(r)),
  });
  client.close();
  p.proc.kill('SIGTERM');
  assert.equal(await p.exited, 0);
  fs.appendFileSync(path.join(dir, 't-0', '00000000000000000000.log'), Buffer.from([0, 0, 0, 40, 1, 2]));
  return dir;
}

describe('startup refusals', () => {
  it('a second broker on a data directory in use exits 2, naming the owner, and every acknowledged record survives', async (t) => {
    const dir = tempDir(t);
    const args = ['--http.port=-1', `--data.dir=${dir}`, '--topics=t:1', '--segment.capacity.bytes=4096'];
    const first = startProcess(['--port=0', ...args]);
    t.after(() => first.proc.kill('SIGKILL'));
    const port = await first.listening;
    const client = await RawClient.connect(port);
    t.after(() => client.close());
    const sent: string[] = [];
    for (let batch = 0; batch < 40; batch++) {
      const records = Array.from({ length: 10 }, (_, i) => `record ${batch}-${i} ${'x'.repeat(i * 7)}`);
      sent.push(...records);
      await client.produce({
        topic: 't',
        partition: 0,
        ack: batch % 2 ? AckPolicy.FORCED : AckPolicy.WRITTEN,
        records: records.map((r) => Buffer.from(r)),
      });
    }
    const active = fs.readdirSync(path.join(dir, 't-0')).sort().at(-1)!;
    const before = snapshot(dir);
    assert.ok(Object.keys(before).length > 3, 'several segments were written');

    for (const second of [startProcess([`--port=${port}`, ...args]), startProcess(['--port=0', ...args])]) {
      assert.equal(await second.exitCode(), 2, second.output());
      assert.match(second.output(), new RegExp(`data directory ${dir} is in use by pid ${first.proc.pid}`));
      assert.ok(!second.lines.some((l) => /partition t-0:/.test(l)), 'no partition was recovered');
      assert.deepEqual(snapshot(dir), before, 'nothing in the data directory changed');
    }

    // Byte for byte, from the first broker, which still appends where it left off.
    const read: string[] = [];
    while (read.length < sent.length) {
      const answer = fetched(
        await client.fetch({ topic: 't', partition: 0, fetchOffset: read.length }),
        read.length,
      );
      assert.ok(answer.records.length > 0, `records from ${read.length}`);
      read.push(...answer.records);
    }
    assert.deepEqual(read, sent);
    const next = await client.produce({
      topic: 't',
      partition: 0,
      ack: AckPolicy.FORCED,
      records: [Buffer.from('next')],
    });
    assert.equal(produced(next).baseOffset, sent.length);
    assert.ok(fs.existsSync(path.join(dir, 't-0', active)), 'the active segment is still there');
  });

  it('a broker killed with SIGKILL leaves no lock that blocks the next start', async (t) => {
    const dir = tempDir(t);
    const args = ['--port=0', '--http.port=-1', `--data.dir=${dir}`, '--topics=t:1'];
    const first = startProcess(args);
    const client = await RawClient.connect(await first.listening);
    await client.produce({ topic: 't', partition: 0, ack: AckPolicy.FORCED, records: [Buffer.from('kept')] });
    client.close();
    first.proc.kill('SIGKILL');
    await first.exited;
    assert.ok(fs.existsSync(path.join(dir, LOCK_FILE_NAME)), 'SIGKILL left the lock file behind');

    const second = startProcess(args);
    t.after(() => second.proc.kill('SIGKILL'));
    const c2 = await RawClient.connect(await second.listening);
    t.after(() => c2.close());
    assert.deepEqual(fetched(await c2.fetch({ topic: 't', partition: 0, fetchOffset: 0 }), 0).records, [
      'kept',
    ]);
    assert.match(
      fs.readFileSync(path.join(dir, LOCK_FILE_NAME), 'utf8'),
      new RegExp(`^pid ${second.proc.pid}\n`),
    );
  });

  it('a broker killed with SIGKILL and not yet reaped (a zombie) does not block the next start', {
    skip: process.platform !== 'linux' && 'zombie states are read from /proc',
  }, async (t) => {
    const dir = tempDir(t);
    const args = ['--port=0', '--http.port=-1', `--data.dir=${dir}`, '--topics=t:1'];
    const { parent, brokerPid } = startUnderNonReapingParent(args);
    t.after(() => parent.proc.kill('SIGKILL')); // the zombie goes to init, which reaps it
    const client = await RawClient.connect(await parent.listening);
    await client.produce({ topic: 't', partition: 0, ack: AckPolicy.FORCED, records: [Buffer.from('kept')] });
    client.close();
    const pid = await brokerPid;
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => processState(pid) === 'Z', `pid ${pid} to become a zombie`);
    assert.match(fs.readFileSync(path.join(dir, LOCK_FILE_NAME), 'utf8'), new RegExp(`^pid ${pid}\n`));

    const second = startProcess(args);
    t.after(() => second.proc.kill('SIGKILL'));
    const c2 = await RawClient.connect(await second.listening);
    t.after(() => c2.close());
    assert.equal(processState(pid), 'Z', 'the first broker was still a zombie when the second started');
    assert.deepEqual(fetched(await c2.fetch({ topic: 't', partition: 0, fetchOffset: 0 }), 0).records, [
      'kept',
    ]);
    assert.match(
      fs.readFileSync(path.join(dir, LOCK_FILE_NAME), 'utf8'),
      new RegExp(`^pid ${second.proc.pid}\n`),
    );
  });

  it('a lock left by a dead broker whose pid now belongs to another process does not block a start', async (t) => {
    const dir = tempDir(t);
    // The pid is alive (this test process) but its start time is not the one in the file.
    fs.writeFileSync(path.join(dir, LOCK_FILE_NAME), `pid ${process.pid}\nstart 1\nboot -\n`);
    const p = startProcess(['--port=0', '--http.port=-1', `--data.dir=${dir}`]);
    t.after(() => p.proc.kill('SIGKILL'));
    await p.listening;
  });

  it('a protocol port in use exits 2 naming booblik.port, before any file is touched', async (t) => {
    const port = await occupyPort(t);
    const dir = await stoppedDataDir(t, ['a', 'b']);
    const before = snapshot(dir);
    const missing = path.join(tempDir(t), 'never-created');
    for (const dataDir of [dir, missing]) {
      const p = startProcess([`--port=${port}`, '--http.port=-1', `--data.dir=${dataDir}`, '--topics=t:1']);
      assert.equal(await p.exitCode(), 2, p.output());
      assert.match(p.output(), new RegExp(`booblik\\.port ${port}: 127\\.0\\.0\\.1:${port} is in use`));
    }
    assert.deepEqual(snapshot(dir), before, 'the torn tail was not cut, nothing was written');
    assert.ok(!fs.existsSync(missing), 'a data directory that did not exist was not created');
  });

  it('a cluster broker on a wildcard address without an advertised one exits 2, naming the key, before it claims an identity', async (t) => {
    const dir = tempDir(t);
    // No etcd is needed: the refusal comes before the broker dials one.
    const p = startProcess([
      '--port=0',
      '--http.port=-1',
      `--data.dir=${dir}`,
      '--bind.address=0.0.0.0',
      '--cluster.etcd=http://127.0.0.1:1',
    ]);
    assert.equal(await p.exitCode(), 2, p.output());
    assert.match(
      p.output(),
      /booblik\.advertised\.address: needed when booblik\.bind\.address is 0\.0\.0\.0/,
    );
    assert.ok(!fs.existsSync(path.join(dir, 'cluster.json')), 'no broker id was written');
  });

  it('a topic of booblik.topics whose directory the file system cannot name exits 2 naming the key, and no topic is stored', async (t) => {
    const dir = tempDir(t);
    const name = 'ü'.repeat(200); // fits the protocol (249 characters), not a 255-byte file name
    const p = startProcess(['--port=0', '--http.port=-1', `--data.dir=${dir}`, `--topics=ok:1,${name}:2`]);
    assert.equal(await p.exitCode(), 2, p.output());
    assert.match(
      p.output(),
      /booblik failed to start: booblik\.topics: name: "ü{40}\.\.\." needs a partition directory of 402 bytes in UTF-8 \("<name>-1"\), expected at most \d+/,
    );
    assert.ok(!fs.existsSync(path.join(dir, 'topics.json')), 'no topic was stored');
    assert.ok(!fs.existsSync(path.join(dir, 'ok-0')), 'no partition was made');
  });

  it('partitions that cannot be opened (a name too long for the file system, a file where the directory goes) do not stop the start: reported, refused with STORAGE_ERROR, the rest served', async (t) => {
    const dir = tempDir(t);
    const args = ['--port=0', '--http.port=0', `--data.dir=${dir}`, '--topics=good:1,blocked:2'];
    const first = startProcess(args);
    const c1 = await RawClient.connect(await first.listening);
    const kept = await c1.produce({
      topic: 'good',
      partition: 0,
      ack: AckPolicy.FORCED,
      records: [Buffer.from('kept')],
    });
    assert.equal(kept.errorCode, ErrorCode.NONE);
    c1.close();
    first.proc.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    // As a broker from before the name check stored it, and as a disk gone wrong left it.
    const long = 'ü'.repeat(200);
    const specFile = path.join(dir, 'topics.json');
    const stored = JSON.parse(fs.readFileSync(specFile, 'utf8'));
    stored.topics.push({ ...stored.topics.find((s: { name: string }) => s.name === 'good'), name: long });
    fs.writeFileSync(specFile, JSON.stringify(stored));
    fs.rmSync(path.join(dir, 'blocked-1'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'blocked-1'), 'not a directory');

    const p = startProcess(args);
    t.after(() => p.proc.kill('SIGKILL'));
    const c = await RawClient.connect(await p.listening);
    t.after(() => c.close());
    const errors = p.lines.filter((l) => /ERROR partition .*: cannot be opened, not served/.test(l));
    assert.equal(errors.length, 2, p.output());
    assert.ok(errors.some((l) => l.includes('blocked-1') && /EEXIST|ENOTDIR/.test(l)));
    assert.ok(errors.some((l) => l.includes(`${long}-0`) && l.includes('ENAMETOOLONG')));

    // The rest is served, as before.
    assert.deepEqual(fetched(await c.fetch({ topic: 'good', partition: 0, fetchOffset: 0 }), 0).records, [
      'kept',
    ]);
    assert.equal(
      (
        await c.produce({
          topic: 'blocked',
          partition: 0,
          ack: AckPolicy.WRITTEN,
          records: [Buffer.from('x')],
        })
      ).errorCode,
      ErrorCode.NONE,
    );
    assert.equal((await c.metadata()).errorCode, ErrorCode.NONE, 'a METADATA of every topic is answered');
    // What cannot be opened is an error, on a connection that stays open.
    for (const [topic, partition] of [
      ['blocked', 1],
      [long, 0],
    ] as const) {
      const produce = await c.produce({
        topic,
        partition,
        ack: AckPolicy.WRITTEN,
        records: [Buffer.from('x')],
      });
      assert.equal(produce.errorCode, ErrorCode.STORAGE_ERROR, `PRODUCE ${topic.slice(0, 8)}-${partition}`);
      const fetch = await c.fetch({ topic, partition, fetchOffset: 0 });
      assert.equal(fetch.errorCode, ErrorCode.STORAGE_ERROR, `FETCH ${topic.slice(0, 8)}-${partition}`);
      assert.equal(
        (await c.metadata(topic)).errorCode,
        ErrorCode.STORAGE_ERROR,
        `METADATA ${topic.slice(0, 8)}`,
      );
    }
    assert.equal(c.closed, false);

    const http = `http://127.0.0.1:${p.httpPort()}`;
    const ready = await fetch(`${http}/readyz`);
    assert.equal(ready.status, 200, 'ready: it serves everything else');
    const body = await ready.text();
    assert.match(body, /^ready\npartition blocked-1: cannot be opened, not served: /m);
    assert.ok(body.includes(`partition ${long}-0: cannot be opened, not served: `), body);
    assert.match(await (await fetch(`${http}/metrics`)).text(), /^booblik_partitions_failed 2$/m);
  });

  it('an HTTP port in use exits 2 naming booblik.http.port, before any file is touched', async (t) => {
    const httpPort = await occupyPort(t);
    const dir = await stoppedDataDir(t, ['a']);
    const before = snapshot(dir);
    const p = startProcess(['--port=0', `--http.port=${httpPort}`, `--data.dir=${dir}`, '--topics=t:1']);
    assert.equal(await p.exitCode(), 2, p.output());
    assert.match(
      p.output(),
      new RegExp(`booblik\\.http\\.port ${httpPort}: 127\\.0\\.0\\.1:${httpPort} is in use`),
    );
    assert.deepEqual(snapshot(dir), before);
  });
});
