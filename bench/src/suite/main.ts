/**
 * The benchmark suite: booblik side by side with Redis Streams and NATS JetStream, plus the machine's
 * physical limits, in one run on one machine. Each workload runs against a fresh server (W4 reads what
 * W1 wrote), from a load generator in a process of its own, several times, systems in rotating order.
 *
 *   npm run bench                      full run (3 repetitions, about 15 minutes)
 *   npm run bench -- --quick           a small version in under a minute
 *   npm run bench -- --profile         also write a V8 CPU profile of every broker run, and its top
 *   npm run bench -- --only=W1,W4 --systems=booblik,redis --reps=5 --keep
 *   npm run bench -- --only=W1,W4 --systems=booblik,booblik-tls    the broker with TLS required beside it
 *   npm run bench -- --only=W1,W4 --systems=booblik,booblik-tls,node-floor,node-floor-tls
 *                                      and what TLS costs the floor server, judged beside it
 *   npm run bench -- --quick --only=F --systems=booblik     fragment stores only (F1..F3)
 *   npm run bench -- --node=24         the servers on Node 24 (server-node.ts); bench:versions runs several
 *
 * Output: a table on stdout; results.json (every figure of every run), results.md and chart.svg in
 * bench/results/<time>/ (or --out=DIR), with the servers' logs and the load generators' diagnostics.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { benchDataDir } from '../data-dir.js';
import { fmt } from '../stats.js';
import { benchCertificatesOrExit } from './certs.js';
import type { SystemName } from './drivers.js';
import { fragmentRows } from './fragments.js';
import type { LoadSpec } from './loadgen.js';
import {
  CASES,
  type Case,
  here,
  keep,
  NODE_FLOOR,
  NODE_FLOOR_TLS,
  option,
  profile,
  quick,
  RECORD_BYTES,
  repoRoot,
  reps,
  runFragments,
  runPhysical,
  runW7,
  serverNode,
  settle,
  sizes,
  W1_SHAPE,
  wantedSystems,
  withClient,
} from './plan.js';
import { OURS, OURS_TLS, type Row } from './report.js';
import { machine, writeResults } from './results.js';
import { type LoadResult, runLoadgen } from './run-loadgen.js';
import {
  ensurePeers,
  machineCpuTicks,
  natsCanSyncAlways,
  type Server,
  scrapeMetrics,
  startBooblik,
  startNats,
  startNodeFloor,
  startRedis,
} from './servers.js';

// ------------------------------------------------------------------------------------------- output

const stamp = new Date()
  .toISOString()
  .replace(/[:.]/g, '-')
  .replace(/-\d\d\dZ$/, 'Z');
const outDir = path.resolve(option('out') ?? path.join(repoRoot, 'bench/results', stamp));
const logDir = path.join(outDir, 'logs');
const profileDir = path.join(outDir, 'profiles');
fs.mkdirSync(logDir, { recursive: true });
const log = (s: string) => process.stderr.write(`# ${s}\n`);
const rows: Row[] = [];
const failures: string[] = [];
const profiles: string[] = [];

const dataRoot = benchDataDir('booblik-bench-suite-');
const running = new Set<Server>();
let interrupted = false;
const cleanup = async () => {
  await Promise.all([...running].map((s) => s.stop(3000)));
  if (!keep) fs.rmSync(dataRoot, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: stopping the servers`);
    void cleanup().then(() => process.exit(130));
  });
}

// ------------------------------------------------------------------------------------------- machine

const peers =
  wantedSystems.includes('redis') || wantedSystems.includes('nats')
    ? ensurePeers(log)
    : { redis: false, nats: false };
const local = [OURS, OURS_TLS, NODE_FLOOR, NODE_FLOOR_TLS];
const systems = wantedSystems.filter(
  (s) => local.includes(s) || (s === 'redis' && peers.redis) || (s === 'nats' && peers.nats),
);
// booblik-tls is ours too: the report shows it beside booblik, not among the peers; node-floor-tls is
// what TLS costs Node, judged in the floors beside booblik-tls.
const peerNames = systems.filter((s) => s !== OURS && s !== OURS_TLS && s !== NODE_FLOOR_TLS);
const natsSyncAlways = systems.includes('nats') && natsCanSyncAlways(dataRoot);

const machineAtStart = machine(dataRoot, systems, natsSyncAlways);

/** booblik-tls, node-floor-tls: a CA and the server's certificate, made once for the run, in its data directory. */
const tlsSystems: readonly string[] = [OURS_TLS, NODE_FLOOR_TLS];
const certs = systems.some((s) => tlsSystems.includes(s))
  ? benchCertificatesOrExit(dataRoot, log)
  : undefined;

// ------------------------------------------------------------------------------------------- running

async function startServer(system: SystemName, durable: boolean, name: string): Promise<Server> {
  const dir = fs.mkdtempSync(path.join(dataRoot, `${name}-`));
  const logFile = path.join(logDir, `${name}.log`);
  let server: Server;
  if (system === 'redis') server = await startRedis(dir, logFile, durable);
  else if (system === 'nats') server = await startNats(dir, logFile, durable && natsSyncAlways);
  else if (system === NODE_FLOOR) server = await startNodeFloor(here, dir, logFile, serverNode.path);
  else if (system === NODE_FLOOR_TLS)
    server = await startNodeFloor(here, dir, logFile, serverNode.path, certs);
  else {
    const cpuProfileDir = profile ? path.join(profileDir, name) : undefined;
    const tls = system === OURS_TLS ? certs : undefined;
    server = await startBooblik({
      repoRoot,
      dataDir: dir,
      logFile,
      cpuProfileDir,
      node: serverNode.path,
      tls,
    });
    if (cpuProfileDir) profiles.push(cpuProfileDir);
  }
  running.add(server);
  const stop = server.stop.bind(server);
  server.stop = async (grace?: number) => {
    running.delete(server);
    const code = await stop(grace);
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
    return code;
  };
  return server;
}

const slug = (s: string) =>
  s
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/-$/, '')
    .toLowerCase();
const maxSeconds = quick ? 60 : 240;

function record(kase: string, system: string, rep: number, result: LoadResult) {
  for (const f of result.figures)
    rows.push({ case: kase, system, metric: f.metric, unit: f.unit, value: f.value, rep });
  if (!result.ok) {
    const why = `${kase} / ${system} / rep ${rep}: ${result.notes.join('; ') || 'failed'}`;
    failures.push(why);
    log(`FAILED ${why}`);
  }
}

function headline(result: LoadResult): string {
  const f = result.figures[0];
  return f ? `${fmt(f.value)} ${f.unit} (${f.metric})` : 'no figure';
}

/**
 * This machine is shared: before a case, wait (at most 10 s) until the other tenants leave at least
 * one core idle, and record how busy it was, so a figure taken under load can be recognised.
 */
async function quiet(): Promise<number> {
  const sample = async () => {
    const a = machineCpuTicks();
    await new Promise((r) => setTimeout(r, 500));
    const b = machineCpuTicks();
    return ((b.busy - a.busy) / Math.max(1, b.total - a.total)) * 100;
  };
  let busy = await sample();
  for (let i = 0; settle && busy > 40 && i < 20; i++) busy = await sample();
  return Math.round(busy);
}

async function runCase(kase: Case, system: SystemName, driver: SystemName, rep: number): Promise<void> {
  const serverSystem = driver === 'booblik-client' ? 'booblik' : system;
  const name = `${slug(kase.name)}-${driver}-r${rep}`;
  const busyBefore = await quiet();
  const server = await startServer(serverSystem as SystemName, kase.durable, name);
  const tlsCaFile = tlsSystems.includes(driver) ? certs?.ca : undefined;
  try {
    rows.push({
      case: kase.name,
      system: driver,
      metric: 'machine busy before',
      unit: '% of all cores',
      value: busyBefore,
      rep,
    });
    const metricsBefore =
      serverSystem === OURS && kase.workload === 'W3' && server.httpPort
        ? await scrapeMetrics(server.httpPort, ['booblik_partition_fsyncs', 'booblik_records_in_total'])
        : undefined;
    const spec: LoadSpec = {
      system: driver,
      port: server.port,
      workload: kase.workload,
      recordBytes: RECORD_BYTES,
      maxSeconds,
      tlsCaFile,
      ...kase.spec,
    };
    const cpu0 = server.cpuSeconds();
    const machine0 = machineCpuTicks();
    const w0 = performance.now();
    const result = await runLoadgen(spec, name, logDir);
    const seconds = (performance.now() - w0) / 1000;
    const machine1 = machineCpuTicks();
    record(kase.name, driver, rep, result);
    // Who was busy: the server (100% = one core: a single-threaded server at its limit), and the whole
    // machine (load generator, server, and anything else running on this shared box).
    rows.push({
      case: kase.name,
      system: driver,
      metric: 'server cpu',
      unit: '% of a core',
      value: Math.round(((server.cpuSeconds() - cpu0) / seconds) * 100),
      rep,
    });
    rows.push({
      case: kase.name,
      system: driver,
      metric: 'machine busy',
      unit: '% of all cores',
      value: Math.round(
        ((machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total)) * 100,
      ),
      rep,
    });
    log(`rep ${rep} ${driver.padEnd(14)} ${kase.name}: ${headline(result)}`);
    if (kase.workload === 'W1') {
      rows.push({
        case: kase.name,
        system: driver,
        metric: 'server peak RSS',
        unit: 'MiB',
        value: Math.round(server.memory().peakMiB),
        rep,
      });
    }
    if (metricsBefore && server.httpPort) {
      const after = await scrapeMetrics(server.httpPort, [
        'booblik_partition_fsyncs',
        'booblik_records_in_total',
      ]);
      const syncs = after.booblik_partition_fsyncs! - metricsBefore.booblik_partition_fsyncs!;
      const records = after.booblik_records_in_total! - metricsBefore.booblik_records_in_total!;
      rows.push({
        case: kase.name,
        system: driver,
        metric: 'records per fsync',
        unit: 'records',
        value: Math.round((records / Math.max(1, syncs)) * 10) / 10,
        rep,
      });
    }
    if (kase.readBack) {
      const then = kase.readBack;
      const readCpu0 = server.cpuSeconds();
      const readT0 = performance.now();
      const r = await runLoadgen(
        {
          system: driver,
          port: server.port,
          workload: then.workload,
          recordBytes: RECORD_BYTES,
          maxSeconds,
          records: kase.spec.records,
          tlsCaFile,
          ...then.spec,
        },
        `${slug(then.name)}-${driver}-r${rep}`,
        logDir,
      );
      record(then.name, driver, rep, r);
      rows.push({
        case: then.name,
        system: driver,
        metric: 'server cpu',
        unit: '% of a core',
        value: Math.round(((server.cpuSeconds() - readCpu0) / ((performance.now() - readT0) / 1000)) * 100),
        rep,
      });
      log(`rep ${rep} ${driver.padEnd(14)} ${then.name}: ${headline(r)}`);
    }
  } finally {
    await server.stop();
  }
}

/**
 * W7: starts on an empty data directory; then a log of the target size, the broker killed, then
 * restarted (and killed again) several times.
 */
async function recovery(): Promise<void> {
  const kase = 'W7 recovery after a kill';
  const dir = fs.mkdtempSync(path.join(dataRoot, 'w7-'));
  const start = async (name: string) => {
    const cpuProfileDir = profile ? path.join(profileDir, name) : undefined;
    const s = await startBooblik({
      repoRoot,
      node: serverNode.path,
      dataDir: dir,
      logFile: path.join(logDir, `${name}.log`),
      cpuProfileDir,
    });
    if (cpuProfileDir) profiles.push(cpuProfileDir);
    running.add(s);
    return s;
  };
  try {
    // A first start, on an empty data directory each time: the runtime, our modules, the default
    // topic created. Stopped with SIGTERM, as an operator would.
    for (let i = 1; i <= sizes.w7Restarts && !interrupted; i++) {
      const empty = fs.mkdtempSync(path.join(dataRoot, 'w7-empty-'));
      const s = await startBooblik({
        repoRoot,
        dataDir: empty,
        logFile: path.join(logDir, `w7-empty-${i}.log`),
      });
      running.add(s);
      rows.push({
        case: kase,
        system: OURS,
        metric: 'start to serving, empty data directory',
        unit: 's',
        value: s.startMs / 1000,
        rep: i,
      });
      log(`start ${i} ${kase}: an empty single node serving after ${(s.startMs / 1000).toFixed(3)} s`);
      await s.stop();
      running.delete(s);
      fs.rmSync(empty, { recursive: true, force: true });
    }
    const filler = await start('w7-fill');
    const records = Math.ceil(sizes.w7Bytes / (RECORD_BYTES + 8));
    const fill = await runLoadgen(
      {
        system: 'booblik',
        port: filler.port,
        workload: 'fill',
        recordBytes: RECORD_BYTES,
        maxSeconds,
        records: Math.ceil(records / 100) * 100,
        batch: 100,
        ...W1_SHAPE,
      },
      'w7-fill',
      logDir,
    );
    if (!fill.ok) failures.push(`${kase}: filling the log failed: ${fill.notes.join('; ')}`);
    await filler.kill();
    running.delete(filler);
    for (let i = 1; i <= sizes.w7Restarts && !interrupted; i++) {
      const s = await start(`w7-restart-${i}`);
      const line = s.output.find((l) => / recovered in /.test(l)) ?? '';
      const m = /, (\d+) B, recovered in ([\d.]+) ms/.exec(line);
      if (m) {
        const gib = Number(m[1]) / 2 ** 30;
        rows.push({
          case: kase,
          system: OURS,
          metric: 'recovery',
          unit: 's/GiB',
          value: Number(m[2]) / 1000 / gib,
          rep: i,
        });
        rows.push({
          case: kase,
          system: OURS,
          metric: 'start to serving',
          unit: 's',
          value: s.startMs / 1000,
          rep: i,
        });
        rows.push({ case: kase, system: OURS, metric: 'log size', unit: 'GiB', value: gib, rep: i });
        log(
          `restart ${i} ${kase}: ${m[2]} ms for ${gib.toFixed(2)} GiB, serving after ${(s.startMs / 1000).toFixed(2)} s`,
        );
      } else failures.push(`${kase}: no "recovered in" line from the broker`);
      if (profile && i === sizes.w7Restarts) await s.stop();
      else await s.kill();
      running.delete(s);
    }
  } finally {
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function physical(rep: number): Promise<void> {
  const dir = fs.mkdtempSync(path.join(dataRoot, 'physical-'));
  const result = await new Promise<LoadResult>((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(here, 'physical.js'), JSON.stringify({ dataDir: dir, ...sizes.physical })],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        resolve({ ...JSON.parse(out.trim()), ok: code === 0 });
      } catch {
        resolve({ figures: [], notes: [`exit ${code}`], ok: false });
      }
    });
  });
  fs.rmSync(dir, { recursive: true, force: true });
  record('physical limits', 'machine', rep, result);
  log(
    `rep ${rep} physical: ${result.figures.map((f) => `${f.metric} ${fmt(f.value)} ${f.unit}`).join(', ')}`,
  );
}

// ------------------------------------------------------------------------------------------- main

const t0 = performance.now();
log(
  `booblik benchmark suite${quick ? ' (quick)' : ''}: ${systems.join(', ')}; ${reps} repetition(s); results in ${outDir}`,
);
log(
  `data on ${machineAtStart.dataFs} (${machineAtStart.dataDevice}), ${machineAtStart.cores} cores, node ${process.version}; servers on node ${serverNode.version} (V8 ${serverNode.v8})`,
);
if (systems.includes('nats') && !natsSyncAlways) {
  log('this nats-server cannot fsync every write: its W3 figures are not durable and not comparable');
}
try {
  if (runPhysical) for (let rep = 1; rep <= reps && !interrupted; rep++) await physical(rep);
  for (let rep = 1; rep <= reps && !interrupted; rep++) {
    const order = [
      ...systems.slice((rep - 1) % systems.length),
      ...systems.slice(0, (rep - 1) % systems.length),
    ];
    for (const system of order) {
      for (const kase of CASES) {
        if (interrupted) break;
        const drivers: SystemName[] = [system as SystemName];
        if (system === OURS && kase.client && withClient) drivers.push('booblik-client');
        for (const d of drivers) {
          try {
            await runCase(kase, system as SystemName, d, rep);
          } catch (e) {
            failures.push(`${kase.name} / ${d} / rep ${rep}: ${(e as Error).message}`);
            log(`FAILED ${kase.name} / ${d}: ${(e as Error).message}`);
          }
        }
      }
    }
  }
  if (runW7 && systems.includes(OURS) && !interrupted) await recovery();
  if (runFragments && systems.includes(OURS) && !interrupted) {
    try {
      rows.push(
        ...(await fragmentRows({
          repoRoot,
          node: serverNode.path,
          dataRoot,
          logDir,
          rep: 1,
          writeBytes: quick ? 64 * 2 ** 20 : 512 * 2 ** 20,
          segmentBytes: quick ? 8 * 2 ** 20 : 32 * 2 ** 20,
          running,
          log,
        })),
      );
    } catch (e) {
      failures.push(`F fragment stores: ${(e as Error).message}`);
      log(`FAILED F fragment stores: ${(e as Error).message}`);
    }
  }
} finally {
  await cleanup();
}

// ------------------------------------------------------------------------------------------- report

writeResults({ rows, failures, profiles, systems, peerNames, natsSyncAlways, machineAtStart, t0, outDir });
process.stdout.write(`\nresults: ${outDir}/{results.md,results.json,chart.svg}\n`);
process.exit(failures.length > 0 ? 1 : 0);
