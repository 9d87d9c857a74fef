/**
 * `npm run cluster` (scripts/cluster.mjs) as a user runs it, on free ports: a broker SIGKILLed by its
 * pid is named with its signal while the other two keep serving, `restart b2` typed on stdin brings
 * it back, and Ctrl-C stops the brokers one at a time, then etcd, every process gone. With
 * `--secure` the brokers require TLS and authentication, on files the script makes once and keeps.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { Client, Connection, TlsRequiredError } from '@booblik/client';
import { ProcessLines, startCli, tempDir, within } from '@booblik/testkit';

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
  // Below the kernel's ephemeral range: the ports other tests get by binding port 0 (and outgoing
  // connections' own ports) come from that range, so they cannot take these between the check and
  // the script's bind. The base is printed, so a collision can be told from a bug.
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  const low = 20_000;
  const high = Math.min(Number.isFinite(ephemeralLow) ? ephemeralLow : 32_768, 32_768) - count;
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = low + Math.floor(Math.random() * (high - low));
    let all = true;
    for (let p = base; p < base + count && all; p++) all = await free(p);
    if (all) {
      console.log(`cluster script ports from ${base}`);
      return base;
    }
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

interface ScriptRun {
  script: ChildProcess;
  out: ProcessLines;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first line from `from` on (by default: from now on) matching `re`. */
  next(re: RegExp, timeoutMs: number, from?: number): Promise<RegExpExecArray>;
  etcdPid: number;
  brokers: Map<string, { address: string; pid: number }>;
  /** Kills `pid` too if it still runs when the test ends (a restarted broker). */
  track(pid: number): void;
}

/**
 * Runs the script as a user does, on `base` and its next five ports, until it says it is ready.
 * When the test ends nothing it started is left: the script stops it, else each pid is killed.
 */
async function runScript(
  t: TestContext,
  base: number,
  dataDir: string,
  args: string[] = [],
): Promise<ScriptRun> {
  const script = spawn(process.execPath, [clusterScript, ...args], {
    env: { ...process.env, BOOBLIK_CLUSTER_PORT: String(base), BOOBLIK_CLUSTER_DATA: dataDir },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    script.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const pids = new Set<number>();
  t.after(async () => {
    if (script.exitCode === null && script.signalCode === null) {
      process.kill(script.pid!, 'SIGINT');
      await within(exited, STEP_TIMEOUT_MS, 'the script to stop').catch(() =>
        process.kill(script.pid!, 'SIGKILL'),
      );
    }
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  const out = new ProcessLines(script, 'the script');
  const next = (re: RegExp, timeoutMs: number, from = out.lines.length) =>
    out.waitForLine(re, timeoutMs, from);

  const etcdPid = Number((await next(/^cluster: etcd on \S+ \(pid (\d+)\)$/, READY_TIMEOUT_MS, 0))[1]);
  pids.add(etcdPid);
  const ready = (await next(/^cluster: ready: (.*)$/, READY_TIMEOUT_MS, 0))[1]!;
  const brokers = new Map(
    [...ready.matchAll(/(b\d) \(zone \w\) (127\.0\.0\.1:\d+) pid (\d+)/g)].map((m) => [
      m[1]!,
      { address: m[2]!, pid: Number(m[3]) },
    ]),
  );
  assert.deepEqual([...brokers.keys()], ['b1', 'b2', 'b3'], `${ready}\n${out.lines.slice(-40).join('\n')}`);
  for (const b of brokers.values()) pids.add(b.pid);
  return { script, out, exited, next, etcdPid, brokers, track: (pid) => void pids.add(pid) };
}

test('npm run cluster: a SIGKILLed broker is named with its signal, the others serve on, "restart b2" brings it back, Ctrl-C stops all', async (t) => {
  const base = await consecutiveFreePorts(6);
  const dataDir = tempDir(t, 'cluster-script');
  const { script, out, exited, next, etcdPid, brokers, track } = await runScript(t, base, dataDir);
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
  track(back);
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

test('npm run cluster -- --secure: the printed command reaches a broker over TLS with SCRAM, a token logs in, plaintext is answered TLS_REQUIRED, the files are kept for the next run', async (t) => {
  const base = await consecutiveFreePorts(6);
  const dataDir = tempDir(t, 'cluster-script-secure');
  const first = await runScript(t, base, dataDir, ['--secure']);
  const made = (await first.next(/^cluster: made (.*) in (\S+)$/, STEP_TIMEOUT_MS, 0))[1]!;
  assert.equal(made, 'ca.pem, b1.pem, b2.pem, b3.pem, keys, admin-password');
  const printed = await first.next(
    /^ {2}npx booblik (metadata --broker (\S+) --tls\.ca (\S+) --user admin --password-file (\S+))$/,
    STEP_TIMEOUT_MS,
    0,
  );
  const [, metadataArgs, printedBroker, caFile, passwordFile] = printed as unknown as string[];
  assert.equal(printedBroker, `127.0.0.1:${base}`);
  const keysFile = (
    await first.next(
      /^ {2}npx booblik tokens issue --keys-file (\S+) --subject NAME --ttl 1h$/,
      STEP_TIMEOUT_MS,
      0,
    )
  )[1]!;
  const secureDir = path.dirname(caFile!);
  assert.equal(fs.statSync(secureDir).mode & 0o777, 0o700, "the secure directory is the user's alone");
  for (const secret of ['ca.key', 'b1.key', 'b2.key', 'b3.key', 'keys', 'admin-password'])
    assert.equal(fs.statSync(path.join(secureDir, secret)).mode & 0o777, 0o600, `${secret} is 0600`);
  const password = fs.readFileSync(passwordFile!, 'utf8').split('\n')[0]!;
  assert.ok(password.length >= 32, 'a random password of 24 bytes or more');
  assert.ok(!first.out.output().includes(password), 'the admin password is in no line the script prints');

  // The printed command, as a user pastes it.
  const cli = startCli(metadataArgs!.split(' '));
  assert.equal(await cli.exitCode(STEP_TIMEOUT_MS), 0, cli.output());
  assert.match(cli.output(), /^default\s+0\s/m, cli.output());

  // Every broker speaks TLS with the CA and SCRAM; a record produced is replicated between them.
  const ca = fs.readFileSync(caFile!);
  const addresses = [...first.brokers.values()].map((b) => b.address);
  for (const address of addresses) {
    const admin = await Connection.connect(address, { tls: { ca }, auth: { user: 'admin', password } });
    assert.equal(admin.principal, 'admin', address);
    await admin.close();
  }
  const client = await Client.connect(addresses, { tls: { ca }, auth: { user: 'admin', password } });
  t.after(() => client.close());
  await client.applyTopics([{ op: 'upsert', spec: { name: 'guarded', partitions: 1, replication: 3 } }]);
  const sent = await client.produce('guarded', 0, [Buffer.from('over TLS')]);
  const got = await client.fetch({
    topic: 'guarded',
    partition: 0,
    offset: sent!.baseOffset,
    maxBytes: 1 << 16,
  });
  assert.deepEqual(
    got.records.map((r) => r.payload.toString()),
    ['over TLS'],
  );

  // A token from the printed keys file logs in as its subject.
  const issue = startCli(['tokens', 'issue', '--keys-file', keysFile, '--subject', 'tester', '--ttl', '1h']);
  assert.equal(await issue.exitCode(STEP_TIMEOUT_MS), 0, issue.stderr());
  const token = issue.lines[0]!.trim();
  const viaToken = await Connection.connect(addresses[1]!, { tls: { ca }, auth: { token } });
  assert.equal(viaToken.principal, 'tester');
  await viaToken.close();

  // A broker that dies is printed with a command line that restarts it secured, with no secret in
  // it; `restart b3` brings it back with TLS and the admin's login.
  const b3 = first.brokers.get('b3')!;
  const killedFrom = first.out.lines.length;
  process.kill(b3.pid, 'SIGKILL');
  const byHand = (
    await first.next(
      /^ {2}(\S+ \S+\/packages\/broker\/dist\/main\.js .*--broker\.id=b3 .*)$/,
      STEP_TIMEOUT_MS,
      killedFrom,
    )
  )[1]!;
  for (const flag of [
    '--tls=required',
    '--auth=required',
    `--tls.ca.file=${caFile}`,
    `--auth.token.keys.file=${keysFile}`,
  ])
    assert.ok(
      byHand.split(' ').includes(flag),
      `the command line to start b3 by hand has ${flag}: ${byHand}`,
    );
  assert.ok(!byHand.includes(password), 'the command line holds no password');
  first.script.stdin!.write('restart b3\n');
  const back = Number(
    (await first.next(/^cluster: b3 is back \(pid (\d+)\)$/, READY_TIMEOUT_MS, killedFrom))[1],
  );
  first.track(back);
  const again3 = await Connection.connect(b3.address, { tls: { ca }, auth: { user: 'admin', password } });
  assert.equal(again3.principal, 'admin');
  await again3.close();

  // Plaintext is refused with TLS_REQUIRED on every broker.
  for (const address of addresses) {
    await assert.rejects(async () => {
      const plain = await Connection.connect(address);
      try {
        await plain.metadata('default');
      } finally {
        plain.destroy();
      }
    }, TlsRequiredError);
  }

  process.kill(first.script.pid!, 'SIGINT');
  assert.equal((await within(first.exited, 60_000, 'the script to stop everything')).code, 0);
  for (const pid of [first.brokers.get('b1')!.pid, first.brokers.get('b2')!.pid, back, first.etcdPid])
    assert.equal(alive(pid), false, `pid ${pid} is gone`);

  // Run again: the same files, so the same CA and the same admin password still log in. On ports
  // of its own: the first run's, free again, may be taken meanwhile by a test running beside this one.
  const again = await runScript(t, await consecutiveFreePorts(6), dataDir, ['--secure']);
  await again.next(/^cluster: TLS and authentication from (\S+)$/, STEP_TIMEOUT_MS, 0);
  assert.ok(!again.out.lines.some((l) => l.startsWith('cluster: made ')), 'nothing is made anew');
  const admin = await Connection.connect(again.brokers.get('b2')!.address, {
    tls: { ca },
    auth: { user: 'admin', password },
  });
  assert.equal(admin.principal, 'admin');
  await admin.close();
  process.kill(again.script.pid!, 'SIGINT');
  assert.equal((await within(again.exited, 60_000, 'the script to stop everything')).code, 0);
  for (const pid of [...again.brokers.values()].map((b) => b.pid).concat(again.etcdPid))
    assert.equal(alive(pid), false, `pid ${pid} is gone`);
});

test('npm run cluster: without openssl --secure says so and starts nothing, and a mistyped --secure=yes is refused rather than run open', async (t) => {
  const dataDir = tempDir(t, 'cluster-script-refused');
  // Free ports all the same: were a refusal missed, nothing would land on 9092.
  const base = await consecutiveFreePorts(6);
  const runToExit = async (args: string[], env: NodeJS.ProcessEnv) => {
    const script = spawn(process.execPath, [clusterScript, ...args], {
      env: { ...env, BOOBLIK_CLUSTER_DATA: dataDir, BOOBLIK_CLUSTER_PORT: String(base) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = new ProcessLines(script, 'the script');
    t.after(() => {
      if (script.exitCode === null && script.signalCode === null) process.kill(script.pid!, 'SIGKILL');
    });
    const { code } = await within(out.closed, STEP_TIMEOUT_MS, 'the script to exit');
    return { code, output: out.output() };
  };
  // A PATH of an empty directory: no openssl, and no etcd either, so a refusal missed starts
  // nothing. No PATH at all would not do: a spawn without one searches /usr/bin.
  const bare = { ...process.env, PATH: tempDir(t, 'empty-path') };
  const noOpenssl = await runToExit(['--secure'], bare);
  assert.equal(noOpenssl.code, 2, noOpenssl.output);
  assert.match(noOpenssl.output, /--secure: the openssl command is needed .*install it/);
  assert.doesNotMatch(noOpenssl.output, /starting etcd/);

  const typo = await runToExit(['--secure=yes'], bare);
  assert.equal(typo.code, 2, typo.output);
  assert.match(typo.output, /unknown argument --secure=yes: the only one is --secure/);
  assert.doesNotMatch(typo.output, /starting etcd/);
});
