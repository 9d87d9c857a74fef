/**
 * `npm run cluster` (scripts/cluster.mjs) as a user runs it, on free ports: a broker SIGKILLed by its
 * pid is named with its signal while the other two keep serving, `restart b2` typed on stdin brings
 * it back, and Ctrl-C stops the brokers one at a time, then etcd, every process gone.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { Client, Connection } from '@booblik/client';
import { ProcessLines, tempDir, within } from '@booblik/testkit';

const clusterScript = new URL('../../scripts/cluster.mjs', import.meta.url).pathname;
/** etcd (perhaps installed by apt-get first) and three brokers starting on a loaded machine. */
const READY_TIMEOUT_MS = 120_000;
const STEP_TIMEOUT_MS = 30_000;

/** `count` consecutive free loopback ports, as the script takes them from BOOBLIK_CLUSTER_PORT. */
async function consecutiveFreePorts(count: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    if (base + count > 65_535) continue;
    let all = true;
    for (let p = base; p < base + count && all; p++) all = await free(p);
    if (all) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('npm run cluster: a SIGKILLed broker is named with its signal, the others serve on, "restart b2" brings it back, Ctrl-C stops all', async (t) => {
  const base = await consecutiveFreePorts(6);
  const dataDir = tempDir(t, 'cluster-script');
  const script = spawn(process.execPath, [clusterScript], {
    env: { ...process.env, BOOBLIK_CLUSTER_PORT: String(base), BOOBLIK_CLUSTER_DATA: dataDir },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    script.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const pids = new Set<number>();
  t.after(async () => {
    // A failed test leaves nothing running: the script stops what it started, else each pid is killed.
    if (script.exitCode === null && script.signalCode === null) {
      process.kill(script.pid!, 'SIGINT');
      await within(exited, STEP_TIMEOUT_MS, 'the script to stop').catch(() =>
        process.kill(script.pid!, 'SIGKILL'),
      );
    }
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  const out = new ProcessLines(script, 'the script');
  /** The first line from `from` on (by default: from now on) matching `re`. */
  const next = (re: RegExp, timeoutMs: number, from = out.lines.length) =>
    out.waitForLine(re, timeoutMs, from);

  const etcdPid = Number((await next(/^cluster: etcd on \S+ \(pid (\d+)\)$/, READY_TIMEOUT_MS))[1]);
  pids.add(etcdPid);
  const ready = (await next(/^cluster: ready: (.*)$/, READY_TIMEOUT_MS))[1]!;
  const brokers = new Map(
    [...ready.matchAll(/(b\d) \(zone \w\) (127\.0\.0\.1:\d+) pid (\d+)/g)].map((m) => [
      m[1]!,
      { address: m[2]!, pid: Number(m[3]) },
    ]),
  );
  assert.deepEqual([...brokers.keys()], ['b1', 'b2', 'b3'], ready);
  for (const b of brokers.values()) pids.add(b.pid);
  const b1 = brokers.get('b1')!;
  const b2 = brokers.get('b2')!;
  const b3 = brokers.get('b3')!;

  // One partition of one copy per broker, so a partition on a survivor needs no failover to serve.
  const client = await Client.connect([b1.address, b3.address]);
  t.after(() => client.close());
  await client.applyTopics([{ op: 'upsert', spec: { name: 'served', partitions: 6, replication: 1 } }]);
  const routes = (await client.metadataWithRoutes('served')).topics[0]!.partitions;

  const killedFrom = out.lines.length;
  process.kill(b2.pid, 'SIGKILL');
  await next(
    /^cluster: b2 exited \(killed by SIGKILL\); b1, b3 keep running\. Type "restart b2"/,
    STEP_TIMEOUT_MS,
    killedFrom,
  );
  const byHand = (
    await next(/^ {2}(\S+ \S+\/packages\/broker\/dist\/main\.js .*)$/, STEP_TIMEOUT_MS, killedFrom)
  )[1]!;
  for (const flag of [`--port=${base + 2}`, `--http.port=${base + 3}`, '--broker.id=b2', '--broker.zone=b']) {
    assert.ok(
      byHand.split(' ').includes(flag),
      `the command line to start b2 by hand has ${flag}: ${byHand}`,
    );
  }
  assert.match(byHand, /--data\.dir=\S+\/b2 /);
  assert.ok(alive(b1.pid) && alive(b3.pid), 'b1 and b3 still run');

  // The survivors serve: a record produced to each partition they lead is acknowledged and read back.
  const survivors = routes.filter((p) => p.route.primary === b1.address || p.route.primary === b3.address);
  assert.ok(survivors.length > 0, 'some partition is on b1 or b3');
  for (const p of survivors) {
    const sent = await client.produce('served', p.partition, [Buffer.from(`after the kill ${p.partition}`)]);
    const got = await client.fetch({
      topic: 'served',
      partition: p.partition,
      offset: sent!.baseOffset,
      maxBytes: 1 << 16,
    });
    assert.deepEqual(
      got.records.map((r) => r.payload.toString()),
      [`after the kill ${p.partition}`],
      `served-${p.partition} on ${p.route.primary}`,
    );
  }

  const restartFrom = out.lines.length;
  script.stdin!.write('restart b2\n');
  const back = Number((await next(/^cluster: b2 is back \(pid (\d+)\)$/, READY_TIMEOUT_MS, restartFrom))[1]);
  pids.add(back);
  assert.notEqual(back, b2.pid);
  const direct = await Connection.connect(b2.address);
  assert.ok((await direct.metadata('served'))[0]!.partitions.length === 6, 'b2 answers again');
  await direct.close();
  script.stdin!.write('status\n');
  await next(
    new RegExp(`^cluster: b1 .* pid ${b1.pid}, b2 .* pid ${back}, b3 .* pid ${b3.pid}$`),
    STEP_TIMEOUT_MS,
    restartFrom,
  );

  const stopFrom = out.lines.length;
  process.kill(script.pid!, 'SIGINT');
  const { code } = await within(exited, 60_000, 'the script to stop everything');
  assert.equal(code, 0);
  assert.deepEqual(
    out.lines.slice(stopFrom).filter((l) => /^cluster: \S+ stopped$/.test(l)),
    ['cluster: b1 stopped', 'cluster: b2 stopped', 'cluster: b3 stopped', 'cluster: etcd stopped'],
    'one broker at a time, then etcd',
  );
  for (const pid of [b1.pid, back, b3.pid, etcdPid]) assert.equal(alive(pid), false, `pid ${pid} is gone`);
});
