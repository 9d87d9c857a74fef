/**
 * Replication, measured: a real etcd and three broker processes on this machine, data on a real
 * disk, R=3 against R=1 in the same run (topics of one partition, created by APPLY with replication 1
 * and 3; the load goes straight to each partition's primary, from the bench process).
 *
 *   1. W1: batches of 100 records of 128 B, 4 connections x 32 in flight, ack WRITTEN, records/s
 *      (floor: R=3 >= 0.3 of R=1).
 *   2. FORCED: 8 producers, one record each in flight, for a few seconds, records/s (floor >= 0.3).
 *   3. Ack latency of one WRITTEN record at a time, p50 and p99 (floor: R=3 p50 <= 3x R=1).
 *   4. From the primary's SIGKILL to the first acknowledged write on the new primary, p50 and max
 *      over --kills kills; the killed broker is restarted and back in the in-sync set before the next
 *      (floor: lease + 2 s).
 *   5. Catch-up: a replica SIGKILLed, --catchup-mib MiB written meanwhile, then restarted: MiB/s from
 *      its restart to METADATA v3's route listing it in sync again (floor >= 200 MiB/s).
 *
 * The machine's own limits (loopback TCP, page-cache writes, fdatasync) are measured at the end of
 * the same run by the side-by-side suite's probe, to read the figures against.
 *
 *   npm run bench:replication                         3 repetitions, 5 kills, 256 MiB caught up
 *   npm run bench:replication -- --reps=5 --kills=20 --catchup-mib=1024 --lease=5000 --no-physical
 *   npm run bench:replication -- --profile            also a CPU profile of each catching-up replica
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEtcd } from '@booblik/cluster/testing';
import { decodeMetadataResponseV3, encodeMetadataRequestV3 } from '@booblik/protocol';
import {
  apply,
  type Broker,
  check,
  kill,
  ListWatch,
  option,
  portOf,
  remove,
  startBroker,
  Wire,
  w1,
} from './cluster-harness.js';
import { CpuMeter, type CpuShares } from './cpu-meter.js';
import { benchDataDir, fsTypeOf } from './data-dir.js';
import { ackLatency, FORCED_PRODUCERS, forced, produceOnce, RECORD_BYTES } from './replication-load.js';
import { fmt, quantile, spread } from './stats.js';
import type { Figure } from './suite/loadgen.js';
import { profileTop } from './suite/profile-top.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const reps = Number(option('reps') ?? 3);
const w1Records = Number(option('records') ?? 2_000_000);
const forcedSeconds = Number(option('forced-seconds') ?? 3);
const latencyRequests = Number(option('latency-requests') ?? 2000);
const kills = Number(option('kills') ?? 5);
const catchupMiB = Number(option('catchup-mib') ?? 256);
/** The cluster test kit's lease (the broker's own default is 5,000 ms). */
const leaseMs = Number(option('lease') ?? 2000);
const physical = !process.argv.includes('--no-physical');
/** A V8 CPU profile of each restarted replica while it catches up, and its top. */
const profile = process.argv.includes('--profile');

/** Records of the catch-up fill: 1 KiB each, 100 a request. */
const CATCHUP_RECORD_BYTES = 1024;
/** The bound on a failover. */
const resumeFloorMs = leaseMs + 2000;
/** Between a failed write and the next try while a failover is under way: the figure's resolution. */
const RETRY_MS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------------------------------ cluster

const root = benchDataDir('booblik-bench-replication-');
const etcd = await startEtcd({ dataDir: path.join(root, 'etcd') });
const brokers: Broker[] = [];
const flags = [`--cluster.lease.millis=${leaseMs}`];
const byAddress = (address: string): Broker => {
  const b = brokers.find((x) => x.address === address);
  if (b === undefined) throw new Error(`no broker at ${address}`);
  return b;
};
const meter = new CpuMeter(() => ({
  ...Object.fromEntries(brokers.map((b) => [b.name, b.child.pid])),
  etcd: etcd.pid,
}));
const restart = async (b: Broker, nodeFlags: string[] = []) => {
  const started = await startBroker(b.name, root, etcd.endpoint, portOf(b), flags, nodeFlags);
  b.child = started.child;
  b.recentOutput = started.recentOutput;
};

/** Waits until `topic` has a primary and all `replicas - 1` others in sync; returns the primary. */
async function settled(watch: ListWatch, topic: string, replicas: number): Promise<Broker> {
  await watch.until(
    () => {
      const r = watch.route(topic);
      return r !== undefined && r.primary !== '' && r.replicas.length === replicas - 1;
    },
    `${topic}: a primary and ${replicas - 1} replicas in sync (route now ${JSON.stringify(watch.route(topic))})`,
    30_000,
  );
  return byAddress(watch.route(topic)!.primary);
}

/** Milliseconds from SIGKILL of `topic`'s primary to the first write acknowledged by its successor. */
async function failover(topic: string): Promise<{ resumedMs: number; rejoinedMs: number }> {
  let watch = await ListWatch.open(brokers[0]!.address);
  const primary = await settled(watch, topic, 3);
  if (primary === brokers[0]) {
    // The watch must outlive the kill: held on a survivor.
    watch.close();
    watch = await ListWatch.open(brokers[1]!.address);
  }
  if (!(await produceOnce(primary.address, topic))) throw new Error(`${topic}: no write before the kill`);
  const killed = performance.now();
  await kill(primary, 'SIGKILL');
  // As a client retrying NO_PRIMARY does: the route asked again until it names a successor that
  // takes the write. Polled, not watched: the successor is routed once it is ready, which is no
  // change of revision a LIST watch would see.
  let resumedMs = -1;
  while (resumedMs < 0) {
    if (performance.now() - killed > 30_000) throw new Error(`${topic}: no write acknowledged in 30 s`);
    await watch.refresh();
    const r = watch.route(topic);
    if (r !== undefined && r.primary !== '' && r.primary !== primary.address) {
      if (await produceOnce(r.primary, topic)) resumedMs = performance.now() - killed;
    }
    if (resumedMs < 0) await sleep(RETRY_MS);
  }
  const restarted = performance.now();
  await restart(primary);
  await settled(watch, topic, 3);
  const rejoinedMs = performance.now() - restarted;
  watch.close();
  return { resumedMs, rejoinedMs };
}

/** Whether METADATA v3 through `address` routes `member` as an in-sync replica of `topic`. */
async function metadataListsInSync(address: string, topic: string, member: string): Promise<boolean> {
  const wire = await Wire.connect(address);
  try {
    const body = check(
      await wire.request(encodeMetadataRequestV3(0, { topics: [topic], minRevision: 0, flags: 0 })),
      'METADATA v3',
    );
    return decodeMetadataResponseV3(body).topics[0]!.partitions[0]!.route.replicas.includes(member);
  } finally {
    wire.close();
  }
}

/**
 * A replica SIGKILLed, `catchupMiB` written while it is away, then restarted: MiB/s from its restart
 * (and from its listening) to the route listing it in sync again.
 */
async function catchUp(topic: string) {
  await apply(brokers[0]!.address, topic, 1, 3);
  let watch = await ListWatch.open(brokers[0]!.address);
  const primary = await settled(watch, topic, 3);
  watch.close();
  watch = await ListWatch.open(primary.address);
  const victim = byAddress(watch.route(topic)!.replicas[0]!);
  await kill(victim, 'SIGKILL');
  // The first writes wait until the primary drops the dead replica from the in-sync set (the lag
  // bound); once all are acknowledged it is certainly out, so its return is a catch-up.
  const records = Math.ceil((catchupMiB * 1048576) / CATCHUP_RECORD_BYTES);
  await w1(primary.address, topic, {
    records,
    batch: 100,
    recordBytes: CATCHUP_RECORD_BYTES,
    connections: 4,
    inFlight: 8,
  });
  if (watch.route(topic)?.replicas.includes(victim.address)) await watch.refresh();
  if (watch.route(topic)?.replicas.includes(victim.address))
    throw new Error('the stopped replica still in sync');
  const since = meter.start();
  const started = performance.now();
  const profileDir = path.join(root, `profile-${topic}`);
  await restart(victim, profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
  const listening = performance.now();
  await watch.until(
    () => watch.route(topic)?.replicas.includes(victim.address) ?? false,
    `${topic}: ${victim.name} back in sync`,
    120_000,
  );
  const back = performance.now();
  const shares = meter.stop(since);
  watch.close();
  if (!(await metadataListsInSync(primary.address, topic, victim.address))) {
    throw new Error(`${topic}: LIST routes ${victim.name} in sync, METADATA v3 does not`);
  }
  let profileText: string | undefined;
  if (profile) {
    // Stopped cleanly (the profile is written at exit), then started again without it.
    await kill(victim, 'SIGTERM');
    const file = fs.readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    profileText = file === undefined ? 'no profile written' : profileTop(path.join(profileDir, file), 12);
    await restart(victim);
    const w = await ListWatch.open(primary.address);
    await settled(w, topic, 3);
    w.close();
  }
  const mib = (records * CATCHUP_RECORD_BYTES) / 1048576;
  return {
    fromStart: mib / ((back - started) / 1000),
    fromListening: mib / ((back - listening) / 1000),
    startMs: listening - started,
    profileText,
    shares,
    primary,
    victim,
  };
}

/** The machine's limits, by the side-by-side suite's probe (a child process of its own). */
function physicalLimits(): Promise<Figure[]> {
  const dir = fs.mkdtempSync(path.join(root, 'physical-'));
  const spec = { dataDir: dir, seconds: 1, writeBytes: 512 * 2 ** 20 };
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [path.join(here, 'suite/physical.js'), JSON.stringify(spec)], (error, out) => {
      if (error) reject(error);
      else resolve((JSON.parse(out.trim().split('\n').pop()!) as { figures: Figure[] }).figures);
    }),
  );
}

/**
 * Median CPU shares of each step by role: the primary, the other two brokers (for catch-up: the
 * restarted replica, then the other), etcd, the load, the rest of the machine.
 */
function cpuTable(
  steps: Map<string, { shares: CpuShares; primary: string }[]>,
  catchupReplicas: readonly string[],
): string {
  const med = (values: number[]) => fmt(spread(values).median);
  const lines = [
    '| CPU, % of one core (200 = the machine), median | primary | other brokers | etcd | load (bench) | rest of the machine |',
    '|---|---|---|---|---|---|',
  ];
  for (const [step, runs] of steps) {
    const others = runs.map((r, i) => {
      const names = Object.keys(r.shares.processes).filter((n) => n !== r.primary && n !== 'etcd');
      const restarted = step === 'catch-up' ? catchupReplicas[i] : undefined;
      const values = names.map((n) => r.shares.processes[n]!);
      // Catch-up: the restarted replica first; otherwise the busier first.
      return restarted === undefined
        ? values.sort((a, b) => b - a)
        : [
            r.shares.processes[restarted]!,
            ...names.filter((n) => n !== restarted).map((n) => r.shares.processes[n]!),
          ];
    });
    const othersText = [0, 1].map((i) => med(others.map((o) => o[i] ?? 0))).join(' + ');
    lines.push(
      `| ${step} | ${med(runs.map((r) => r.shares.processes[r.primary]!))} | ${othersText}${step === 'catch-up' ? ' (restarted + other)' : ''} | ${med(runs.map((r) => r.shares.processes.etcd ?? 0))} | ${med(runs.map((r) => r.shares.load))} | ${med(runs.map((r) => r.shares.rest))} |`,
    );
  }
  return lines.join('\n');
}

// ------------------------------------------------------------------------------------------- main

try {
  const [load1] = os.loadavg();
  process.stdout.write(
    `data on ${fsTypeOf(root)} (${root}); etcd ${etcd.endpoint}; lease ${leaseMs} ms; ${reps} repetitions, ${kills} kills, ${catchupMiB} MiB caught up; load average ${load1!.toFixed(2)} before\n`,
  );
  // One after another: b1 is the oldest member, the allocator's first leader.
  for (const name of ['b1', 'b2', 'b3']) brokers.push(await startBroker(name, root, etcd.endpoint, 0, flags));
  await apply(brokers[0]!.address, 'r1', 1, 1);
  await apply(brokers[0]!.address, 'r3', 1, 3);
  const watch = await ListWatch.open(brokers[0]!.address);
  const p1 = await settled(watch, 'r1', 1);
  const p3 = await settled(watch, 'r3', 3);
  watch.close();
  process.stdout.write(`  R=1 on ${p1.name}; R=3 primary ${p3.name}, replicas in sync on the other two\n`);

  type Pair = { r1: number; r3: number };
  type Latency = { p50: number; p99: number };
  const w1s: Pair[] = [];
  const forceds: Pair[] = [];
  const latencies: { r1: Latency; r3: Latency }[] = [];
  /** CPU shares of each step, by step name, one per repetition. */
  const cpu = new Map<string, { shares: CpuShares; primary: string }[]>();
  const noteCpu = (step: string, shares: CpuShares, primary: Broker) =>
    cpu.set(step, [...(cpu.get(step) ?? []), { shares, primary: primary.name }]);
  /** Runs `measure` for R=1 and R=3, alternating which goes first so a drift favours neither. */
  const both = async <T>(
    rep: number,
    step: string,
    measure: (address: string, topic: string) => Promise<T>,
  ) => {
    const run = async (primary: Broker, topic: 'r1' | 'r3') => {
      const { value, cpu: shares } = await meter.measure(() => measure(primary.address, topic));
      noteCpu(`${step} R=${topic.slice(1)}`, shares, primary);
      return value;
    };
    const first = rep % 2 === 0;
    const a = first ? await run(p1, 'r1') : undefined;
    const r3 = await run(p3, 'r3');
    return { r1: a ?? (await run(p1, 'r1')), r3 };
  };
  for (let rep = 0; rep < reps; rep++) {
    const w = await both(rep, 'W1', (address, topic) =>
      w1(address, topic, {
        records: w1Records,
        batch: 100,
        recordBytes: RECORD_BYTES,
        connections: 4,
        inFlight: 32,
      }),
    );
    const f = await both(rep, 'FORCED', (address, topic) => forced(address, topic, forcedSeconds));
    const lat = await both(rep, 'ack latency', (address, topic) =>
      ackLatency(address, topic, latencyRequests),
    );
    w1s.push(w);
    forceds.push(f);
    latencies.push(lat);
    process.stdout.write(
      `  rep ${rep + 1}: W1 ${fmt(w.r1)} / ${fmt(w.r3)} rec/s (${(w.r3 / w.r1).toFixed(2)}x); FORCED ${fmt(f.r1)} / ${fmt(f.r3)} rec/s (${(f.r3 / f.r1).toFixed(2)}x); ack p50 ${lat.r1.p50.toFixed(3)} / ${lat.r3.p50.toFixed(3)} ms (R=1 / R=3)\n`,
    );
  }
  const p50s = latencies.map((l) => ({ r1: l.r1.p50, r3: l.r3.p50 }));
  const p99s = latencies.map((l) => ({ r1: l.r1.p99, r3: l.r3.p99 }));

  const resumed: number[] = [];
  const rejoined: number[] = [];
  for (let k = 0; k < kills; k++) {
    const f = await failover('r3');
    resumed.push(f.resumedMs);
    rejoined.push(f.rejoinedMs);
    process.stdout.write(
      `  SIGKILL ${k + 1}: first write acknowledged by the new primary after ${fmt(f.resumedMs)} ms; the killed broker back in sync ${fmt(f.rejoinedMs)} ms after its restart\n`,
    );
  }

  const caught: { fromStart: number; fromListening: number }[] = [];
  const catchupReplicas: string[] = [];
  const catchupStartMs: number[] = [];
  const profiles: string[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const topic = `catchup${rep + 1}`;
    const c = await catchUp(topic);
    caught.push(c);
    noteCpu('catch-up', c.shares, c.primary);
    catchupReplicas.push(c.victim.name);
    catchupStartMs.push(c.startMs);
    if (c.profileText !== undefined)
      profiles.push(`catch-up ${rep + 1}, the restarted replica ${c.victim.name}: ${c.profileText}`);
    await remove(brokers[0]!.address, topic);
    process.stdout.write(
      `  catch-up ${rep + 1}: ${catchupMiB} MiB at ${fmt(c.fromStart)} MiB/s from the restart (${fmt(c.fromListening)} MiB/s from listening)\n`,
    );
  }

  const limits = physical ? await physicalLimits() : [];

  const s = (values: number[], digits = 0) => {
    const x = spread(values);
    return `${fmt(x.median, digits)} (${fmt(x.min, digits)}..${fmt(x.max, digits)})`;
  };
  const verdict = (value: number, floor: number, atLeast: boolean) =>
    (atLeast ? value >= floor : value <= floor) ? 'met' : 'missed';
  const ratio = (pairs: Pair[]) => pairs.map((p) => p.r3 / p.r1);
  const med = (values: number[]) => spread(values).median;
  const sortedResumed = [...resumed].sort((a, b) => a - b);
  const resumedP50 = quantile(sortedResumed, 0.5);
  const resumedMax = sortedResumed[sortedResumed.length - 1]!;
  process.stdout.write(
    [
      '',
      '| figure | median (min..max) | floor |',
      '|---|---|---|',
      `| W1 (batches of 100 x 128 B, 4 x 32 in flight, WRITTEN), R=1, records/s | ${s(w1s.map((p) => p.r1))} | |`,
      `| the same, R=3, records/s | ${s(w1s.map((p) => p.r3))} | |`,
      `| **W1 R=3 / R=1**, same run | ${s(ratio(w1s), 2)} | >= 0.3: ${verdict(med(ratio(w1s)), 0.3, true)} |`,
      `| FORCED, ${FORCED_PRODUCERS} producers of one record, R=1, records/s | ${s(forceds.map((p) => p.r1))} | |`,
      `| the same, R=3, records/s | ${s(forceds.map((p) => p.r3))} | |`,
      `| **FORCED R=3 / R=1**, same run | ${s(ratio(forceds), 2)} | >= 0.3: ${verdict(med(ratio(forceds)), 0.3, true)} |`,
      `| ack latency, one WRITTEN record at a time, R=1, p50 ms | ${s(
        p50s.map((p) => p.r1),
        3,
      )} | |`,
      `| the same, R=3, p50 ms | ${s(
        p50s.map((p) => p.r3),
        3,
      )} | |`,
      `| **ack latency p50 R=3 / R=1** | ${s(ratio(p50s), 2)} | <= 3: ${verdict(med(ratio(p50s)), 3, false)} |`,
      `| ack latency, R=1, p99 ms | ${s(
        p99s.map((p) => p.r1),
        3,
      )} | |`,
      `| the same, R=3, p99 ms | ${s(
        p99s.map((p) => p.r3),
        3,
      )} | |`,
      `| **primary's SIGKILL to the first write acknowledged by the new primary** (lease ${fmt(leaseMs)} ms), p50 / max of ${kills}, ms | ${fmt(resumedP50)} / ${fmt(resumedMax)} | <= ${fmt(resumeFloorMs)}: ${verdict(resumedMax, resumeFloorMs, false)} |`,
      `| the killed broker, restarted, back in the in-sync set, ms | ${s(rejoined)} | |`,
      `| **catch-up of ${catchupMiB} MiB** (1 KiB records), restart to in sync again, MiB/s | ${s(caught.map((c) => c.fromStart))} | >= 200: ${verdict(med(caught.map((c) => c.fromStart)), 200, true)} |`,
      `| the same, from the restarted broker listening, MiB/s | ${s(caught.map((c) => c.fromListening))} | |`,
      `| the restarted broker: from spawn to listening, ms | ${s(catchupStartMs)} | |`,
      ...limits.map((f) => `| machine: ${f.metric}, ${f.unit} | ${fmt(f.value)} | |`),
      '',
      cpuTable(cpu, catchupReplicas),
      '',
      ...profiles.map((p) => `${p}\n`),
    ].join('\n'),
  );
} catch (error) {
  // What the brokers said about roles and replicas: the first thing to read when a step stalls.
  for (const b of brokers) {
    const lines = b
      .recentOutput()
      .split('\n')
      .filter((l) => /primary|replica|sync|epoch|diverged|lease|allocator|error/i.test(l));
    process.stderr.write(`--- ${b.name} (${b.address})\n${lines.slice(-30).join('\n')}\n`);
    const routes = await ListWatch.open(b.address)
      .then((w) => {
        w.close();
        return w.listing.topics.map((t) => `${t.spec.name} ${JSON.stringify(t.routes[0])}`).join('; ');
      })
      .catch((e: unknown) => String(e));
    process.stderr.write(`    routes as ${b.name} answers them: ${routes}\n`);
  }
  throw error;
} finally {
  await Promise.all(brokers.map((b) => kill(b, 'SIGKILL')));
  await etcd.cleanup();
  fs.rmSync(root, { recursive: true, force: true });
}
