import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { startProcess, tempDir, waitUntil } from '@booblik/testkit';
import { fetched, produced, RawClient } from './test-support/raw-client.js';

describe('booblik-broker process', () => {
  it('restart recovers the data directory and continues offsets', async (t) => {
    const dir = tempDir(t);
    const args = ['--port=0', '--http.port=-1', `--data.dir=${dir}`, '--topics=t:1'];
    const first = startProcess(args);
    const c1 = await RawClient.connect(await first.listening);
    await c1.produce({
      topic: 't',
      partition: 0,
      ack: AckPolicy.FORCED,
      records: [Buffer.from('a'), Buffer.from('b')],
    });
    c1.close();
    first.proc.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.ok(first.lines.some((l) => l.includes('booblik stopped')));

    const second = startProcess(args);
    t.after(() => second.proc.kill('SIGKILL'));
    const c2 = await RawClient.connect(await second.listening);
    t.after(() => c2.close());
    assert.ok(
      second.lines.some((l) => /partition t-0: offsets 0\.\.2, 1 segment/.test(l)),
      second.lines.join('\n'),
    );
    const next = await c2.produce({
      topic: 't',
      partition: 0,
      ack: AckPolicy.WRITTEN,
      records: [Buffer.from('c')],
    });
    assert.equal(produced(next).baseOffset, 2);
    assert.deepEqual(fetched(await c2.fetch({ topic: 't', partition: 0, fetchOffset: 0 }), 0).records, [
      'a',
      'b',
      'c',
    ]);
  });

  it('SIGTERM answers a held fetch, flushes, prints "booblik stopped" and exits 0', async (t) => {
    const dir = tempDir(t);
    const p = startProcess(['--port=0', '--http.port=0', `--data.dir=${dir}`]);
    const c = await RawClient.connect(await p.listening);
    t.after(() => c.close());
    const held = c.fetch({ topic: 'default', partition: 0, fetchOffset: 0, maxWaitMs: 60_000 });
    const metrics = () => fetch(`http://127.0.0.1:${p.httpPort()}/metrics`).then((r) => r.text());
    await waitUntil(async () => /booblik_held_fetches 1/.test(await metrics()), 'the fetch to be held');
    p.proc.kill('SIGTERM');
    const answer = await held;
    assert.equal(answer.errorCode, 0);
    assert.equal(await p.exited, 0);
    assert.match(p.lines.at(-1)!, /booblik stopped/);
  });

  it('SIGTERM during startup (at its first log line) stops it cleanly once it is up, not by the signal', async (t) => {
    const dir = tempDir(t);
    const p = startProcess(['--port=0', '--http.port=-1', `--data.dir=${dir}`, '--topics=t:64']);
    t.after(() => p.proc.kill('SIGKILL'));
    await new Promise<void>((resolve) => {
      const check = () =>
        p.lines.some((l) => l.includes('booblik starting')) ? resolve() : setTimeout(check, 1);
      check();
    });
    p.proc.kill('SIGTERM');
    assert.equal(await p.exitCode(), 0, p.output());
    assert.match(p.lines.at(-1)!, /booblik stopped/);
  });

  it('environment variables configure it, and a flag wins over them', async (t) => {
    const dir = tempDir(t);
    const p = startProcess(['--port=0', '--topics=flagged:2'], {
      BOOBLIK_DATA_DIR: dir,
      BOOBLIK_TOPICS: 'env:1',
      BOOBLIK_HTTP_PORT: '-1',
    });
    t.after(() => p.proc.kill('SIGKILL'));
    await p.listening;
    assert.deepEqual(fs.readdirSync(dir).sort(), ['booblik.lock', 'flagged-0', 'flagged-1', 'topics.json']);
  });

  it('a bad value stops startup with exit code 2 and a line naming the key', async () => {
    const p = startProcess(['--port=0', '--retention.millis=soon']);
    assert.equal(await p.exited, 2);
    assert.match(p.stderr(), /booblik: configuration error: booblik\.retention\.millis: "soon"/);
  });

  it('binding wider than loopback with auth off warns that anyone may read and write; with auth required it does not', async (t) => {
    const warned =
      /WARN binding 0\.0\.0\.0 with booblik\.auth=off: anyone who can reach this port can read and write/;
    for (const auth of ['off', 'required']) {
      const dir = tempDir(t);
      const p = startProcess([
        '--port=0',
        '--http.port=-1',
        '--bind.address=0.0.0.0',
        `--data.dir=${dir}`,
        `--auth=${auth}`,
      ]);
      t.after(() => p.proc.kill('SIGKILL'));
      await p.listening;
      assert.equal(
        p.lines.some((l) => warned.test(l)),
        auth === 'off',
        `auth ${auth}`,
      );
    }
  });

  it('serves /metrics, /healthz and /readyz on the HTTP port', async (t) => {
    const dir = tempDir(t);
    const p = startProcess(['--port=0', '--http.port=0', `--data.dir=${dir}`]);
    t.after(() => p.proc.kill('SIGKILL'));
    await p.listening;
    const get = (route: string) => fetch(`http://127.0.0.1:${p.httpPort()}${route}`);
    assert.equal((await get('/healthz')).status, 200);
    assert.equal((await get('/readyz')).status, 200);
    const metrics = await (await get('/metrics')).text();
    assert.match(metrics, /booblik_partition_high_watermark\{topic="default",partition="0"\} 0/);
    assert.match(metrics, /booblik_connections 0/);
  });
});
