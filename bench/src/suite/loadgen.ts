/**
 * The load generator: a process of its own (never the broker's: a shared event loop and heap would
 * measure the harness), talking to one system on loopback through its lean driver. Every loop is
 * bounded by a count and by `maxSeconds`.
 *
 *   node bench/dist/suite/loadgen.js '<LoadSpec as JSON>'
 *
 * Prints one JSON line on stdout: { figures: [{ metric, unit, value }], notes: [...] }; diagnostics on
 * stderr. Exit code 1 on a failure, a short count or a verification mismatch.
 */

import { quantile } from '../stats.js';
import { type Driver, type Handle, makeDriver, RecordPool, type SystemName } from './drivers.js';
import { nowNs } from './wire/socket.js';

export type WorkloadName = 'W1' | 'fill' | 'W2' | 'W3' | 'W4' | 'W5' | 'W6';

export interface LoadSpec {
  system: SystemName;
  port: number;
  workload: WorkloadName;
  recordBytes: number;
  maxSeconds: number;
  /** W1/fill: records in total, per request, connections, requests in flight per connection. */
  records?: number;
  batch?: number;
  connections?: number;
  inFlight?: number;
  /** Unmeasured single-record requests first (JIT, connection warm-up). */
  warmup?: number;
  /**
   * W1/fill: unmeasured records first, in the measured shape (batches, connections, requests in
   * flight), so that the figure is the steady state and not the JIT tiering up on the batch path.
   */
  warmupRecords?: number;
  /** W3: concurrent producers of one record each, for `seconds`; booblik asks FORCED. */
  producers?: number;
  seconds?: number;
  forced?: boolean;
  /** W4: bytes per read request; passes over the log until `seconds` have passed (at most 5). */
  fetchBytes?: number;
  verify?: boolean;
  /** W5: requests per second offered, open loop. */
  rate?: number;
  /** W6: caught-up consumers with a `waitMs` long poll; a record every `intervalMs`; then idle. */
  consumers?: number;
  waitMs?: number;
  intervalMs?: number;
  idleSeconds?: number;
  /** booblik-tls: the CA (PEM file) the broker's certificate is verified against. */
  tlsCaFile?: string;
}

export interface Figure {
  metric: string;
  unit: string;
  value: number;
}

/** W4 through the client: the small fetch size the 1 MiB default is compared with. */
const SMALL_FETCH_BYTES = 64 * 1024;

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const figures: Figure[] = [];
const notes: string[] = [];
const emit = (metric: string, unit: string, value: number) => figures.push({ metric, unit, value });
const diag = (s: string) => process.stderr.write(`# [${spec.system} ${spec.workload}] ${s}\n`);
const started = nowNs();
const deadlineNs = started + spec.maxSeconds * 1e9;
const pastDeadline = () => nowNs() >= deadlineNs;
let failed = false;
const fail = (why: string) => {
  diag(`FAILED: ${why}`);
  notes.push(`failed: ${why}`);
  failed = true;
};

const pool = new RecordPool(spec.recordBytes);
const driver: Driver = makeDriver(spec.system, {
  port: spec.port,
  pool,
  forced: spec.forced ?? false,
  tlsCaFile: spec.tlsCaFile,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const us = (ns: number) => ns / 1e3;
const sorted = (a: Float64Array, n: number) => Float64Array.from(a.subarray(0, n)).sort();
function latencies(prefix: string, a: Float64Array, n: number, qs: [string, number][]) {
  const s = sorted(a, n);
  for (const [name, q] of qs)
    emit(`${prefix}${name}`, 'µs', Math.round(us(quantile(s as unknown as number[], q))));
}

/** CPU this process used while measuring, as a share of one core: near 100% means the client set the pace. */
function cpuShare(cpu0: NodeJS.CpuUsage, t0: number) {
  const c = process.cpuUsage(cpu0);
  const seconds = (nowNs() - t0) / 1e9;
  emit('loadgen cpu', '% of a core', Math.round(((c.user + c.system) / 1e6 / seconds) * 100));
}

async function warmUp(h: Handle, n: number) {
  for (let i = 0; i < n && !pastDeadline(); i++) await h.produce(1, i);
}

/** `requests` batches of `batch` from pool index `first`, spread over the handles; latencies into `lat`. */
async function drive(handles: Handle[], requests: number, batch: number, first: number, lat?: Float64Array) {
  let issued = 0;
  let done = 0;
  await Promise.all(
    handles.flatMap((h) =>
      Array.from({ length: spec.inFlight ?? 4 }, async () => {
        while (issued < requests && !pastDeadline()) {
          const i = issued++;
          const ts = nowNs();
          await h.produce(batch, first + i * batch);
          if (lat) lat[done] = nowNs() - ts;
          done++;
        }
      }),
    ),
  );
  return done;
}

async function batched(report: boolean) {
  const total = spec.records ?? 1_000_000;
  const batch = spec.batch ?? 100;
  const handles = await Promise.all(Array.from({ length: spec.connections ?? 4 }, () => driver.open()));
  await warmUp(handles[0]!, spec.warmup ?? 0);
  const warmRequests = Math.floor((spec.warmupRecords ?? 0) / batch);
  const w0 = nowNs();
  const warmed = (await drive(handles, warmRequests, batch, 0)) * batch;
  const warmSeconds = (nowNs() - w0) / 1e9;
  const requests = Math.floor(total / batch);
  const lat = new Float64Array(requests);
  const cpu0 = process.cpuUsage();
  const t0 = nowNs();
  const done = await drive(handles, requests, batch, warmed, lat);
  const dt = (nowNs() - t0) / 1e9;
  const records = done * batch;
  diag(`${records} records in ${dt.toFixed(2)} s (batches of ${batch}, after ${warmed} unmeasured)`);
  if (done < requests) fail(`deadline hit at ${records}/${requests * batch} records`);
  if (report) {
    emit('records/s', 'records/s', Math.round(records / dt));
    emit('MiB/s', 'MiB/s', Math.round((records * spec.recordBytes) / 1048576 / dt));
    // The pass before, from a cold start (what the figure was before it had a warm-up in its shape).
    if (warmed > 0) emit('records/s, first pass from cold', 'records/s', Math.round(warmed / warmSeconds));
    latencies('latency ', lat, done, [
      ['p50', 0.5],
      ['p99', 0.99],
    ]);
    cpuShare(cpu0, t0);
  }
  for (const h of handles) h.close();
  return records + warmed + (spec.warmup ?? 0);
}

async function oneAtATime() {
  const h = await driver.open();
  await warmUp(h, spec.warmup ?? 1000);
  const count = spec.records ?? 50_000;
  const lat = new Float64Array(count);
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = nowNs();
  while (n < count && !pastDeadline()) {
    const ts = nowNs();
    await h.produce(1, n);
    lat[n++] = nowNs() - ts;
  }
  const dt = (nowNs() - t0) / 1e9;
  if (n < count) fail(`deadline hit at ${n}/${count}`);
  emit('requests/s', 'requests/s', Math.round(n / dt));
  latencies('latency ', lat, n, [
    ['p50', 0.5],
    ['p99', 0.99],
  ]);
  cpuShare(cpu0, t0);
  h.close();
  return n + (spec.warmup ?? 1000);
}

async function durable() {
  const producers = spec.producers ?? 8;
  const handles = await Promise.all(Array.from({ length: producers }, () => driver.open()));
  const warm = spec.warmup ?? 200;
  await Promise.all(handles.map((h) => warmUp(h, Math.ceil(warm / producers))));
  const endNs = nowNs() + (spec.seconds ?? 5) * 1e9;
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = nowNs();
  await Promise.all(
    handles.map(async (h, p) => {
      for (let i = 0; i < 10_000_000 && nowNs() < endNs && !pastDeadline(); i++) {
        await h.produce(1, p * 31 + i);
        n++;
      }
    }),
  );
  const dt = (nowNs() - t0) / 1e9;
  emit('records/s', 'records/s', Math.round(n / dt));
  cpuShare(cpu0, t0);
  for (const h of handles) h.close();
  return n + Math.ceil(warm / producers) * producers;
}

async function read() {
  const h = await driver.open();
  const stored = await driver.stored();
  const expected = Math.min(stored, spec.records ?? stored);
  if (expected === 0) fail('nothing stored to read');
  const chunk = spec.fetchBytes ?? 1 << 20;
  const minNs = (spec.seconds ?? 1) * 1e9;
  const pass = async (verify: boolean, metric: string, chunkBytes = chunk) => {
    // One unmeasured pass first, as W5 warms up: the steady state is measured, not the JIT compiling
    // the read path (a reader's first pass ran at 0.6..0.8 of its later ones).
    if ((await h.readAll(expected, chunkBytes, verify, pastDeadline)).records !== expected) {
      fail(`warm-up read fewer than ${expected} records`);
    }
    const cpu0 = process.cpuUsage();
    let records = 0;
    let bytes = 0;
    let passes = 0;
    const t0 = nowNs();
    // Whole passes until the measurement is long enough to mean something, at most 5.
    while (passes < 5 && (passes === 0 || nowNs() - t0 < minNs) && !pastDeadline()) {
      const r = await h.readAll(expected, chunkBytes, verify, pastDeadline);
      if (r.records !== expected) {
        fail(`read ${r.records} of ${expected} records`);
        break;
      }
      records += r.records;
      bytes += r.bytes;
      passes++;
    }
    const dt = (nowNs() - t0) / 1e9;
    diag(
      `${metric}: ${passes} pass(es) over ${expected} records, ${(bytes / 1048576).toFixed(0)} MiB in ${dt.toFixed(2)} s`,
    );
    emit(metric, 'MiB/s', Math.round(bytes / 1048576 / dt));
    emit(`${metric} records/s`, 'records/s', Math.round(records / dt));
    if (!verify) cpuShare(cpu0, t0);
  };
  await pass(false, 'read');
  if (spec.verify && (spec.system === 'booblik' || spec.system === 'booblik-tls')) {
    await pass(true, 'read, every CRC verified');
  }
  // The client's Consumer must not get slower per record as a fetch holds more of them.
  if (spec.system === 'booblik-client') await pass(true, 'read, 64 KiB fetches', SMALL_FETCH_BYTES);
  h.close();
}

async function openLoop() {
  const h = await driver.open();
  await warmUp(h, spec.warmup ?? 1000);
  const rate = spec.rate ?? 5000;
  const count = Math.round(rate * (spec.seconds ?? 5));
  const intervalNs = 1e9 / rate;
  const fromIntended = new Float64Array(count).fill(Number.NaN);
  const fromSent = new Float64Array(count).fill(Number.NaN);
  let issued = 0;
  let done = 0;
  let maxLagNs = 0;
  const cpu0 = process.cpuUsage();
  const t0 = nowNs() + 1e6;
  await new Promise<void>((resolve, reject) => {
    // Busy polling through setImmediate: timers fire at 1 ms granularity, too coarse for one send every
    // 200 µs; between turns the event loop still polls the socket, so answers are stamped on arrival.
    const turn = () => {
      const now = nowNs();
      while (issued < count && t0 + issued * intervalNs <= now) {
        const i = issued++;
        const intended = t0 + i * intervalNs;
        const sent = nowNs();
        maxLagNs = Math.max(maxLagNs, sent - intended);
        h.produce(1, i).then(() => {
          const t = nowNs();
          fromIntended[i] = t - intended;
          fromSent[i] = t - sent;
          if (++done === count) resolve();
        }, reject);
      }
      if (pastDeadline()) resolve();
      else if (issued < count) setImmediate(turn);
    };
    turn();
  });
  const dt = (nowNs() - t0) / 1e9;
  if (done < count) fail(`${done}/${count} answered before the deadline`);
  diag(
    `${done} requests in ${dt.toFixed(2)} s at ${rate}/s offered; worst send lag ${us(maxLagNs).toFixed(0)} µs`,
  );
  const qs: [string, number][] = [
    ['p50', 0.5],
    ['p99', 0.99],
    ['p999', 0.999],
  ];
  latencies('latency ', fromIntended, done, qs);
  latencies('service latency ', fromSent, done, qs);
  emit('achieved rate', 'requests/s', Math.round(done / dt));
  cpuShare(cpu0, t0);
  h.close();
  return done + (spec.warmup ?? 1000);
}

async function longPoll() {
  const consumers = spec.consumers ?? 4;
  const waitMs = spec.waitMs ?? 5000;
  const intervalMs = spec.intervalMs ?? 100;
  const writes = Math.round(((spec.seconds ?? 10) * 1000) / intervalMs);
  const producer = await driver.open();
  await producer.produce(1, 0); // the stream exists and the consumers start at its end
  const handles = await Promise.all(Array.from({ length: consumers }, () => driver.open()));
  const tailers = await Promise.all(handles.map((h) => h.tail(waitMs)));
  const sentAt = new Float64Array(writes).fill(Number.NaN);
  // The producer's own answer after 100 ms of quiet: how long a request takes when nothing is warm.
  const acks = new Float64Array(writes);
  const delays = new Float64Array(writes * consumers);
  let got = 0;
  let requests = 0;
  let stop = false;
  const loops = tailers.map(async (t) => {
    while (!stop && !pastDeadline()) {
      requests++;
      let records: Buffer[];
      try {
        records = await t.next();
      } catch (e) {
        if (!stop) throw e;
        return;
      }
      const at = nowNs();
      for (const r of records) {
        const seq = r.readUInt32BE(0);
        if (seq < writes && !Number.isNaN(sentAt[seq]!)) delays[got++] = at - sentAt[seq]!;
      }
    }
  });
  await sleep(200); // every consumer has its long poll waiting
  const t0 = nowNs();
  for (let i = 0; i < writes && !pastDeadline(); i++) {
    const wait = t0 + i * intervalMs * 1e6 - nowNs();
    if (wait > 0) await sleep(wait / 1e6);
    const record = Buffer.from(pool.record(i));
    record.writeUInt32BE(i, 0);
    sentAt[i] = nowNs();
    await producer.produceRecords([record]);
    acks[i] = nowNs() - sentAt[i]!;
  }
  await sleep(Math.min(1000, intervalMs * 5));
  if (got < writes * consumers) fail(`${got} deliveries, expected ${writes * consumers}`);
  latencies('wake-up ', delays, got, [
    ['p50', 0.5],
    ['p99', 0.99],
  ]);
  latencies('producer ack after idle ', acks, writes, [['p50', 0.5]]);
  // Idle: nothing is written; a long poll costs requests only when its wait ends.
  const idleSeconds = spec.idleSeconds ?? 10;
  const before = requests;
  await sleep(idleSeconds * 1000);
  emit(
    'idle requests per consumer',
    'requests/s',
    Math.round(((requests - before) / consumers / idleSeconds) * 100) / 100,
  );
  stop = true;
  for (const h of handles) h.close();
  producer.close();
  await Promise.race([Promise.allSettled(loops), sleep(1000)]);
  return writes + 1;
}

async function main() {
  const writes = spec.workload !== 'W4';
  if (writes) await driver.reset();
  let produced = -1;
  switch (spec.workload) {
    case 'W1':
      produced = await batched(true);
      break;
    case 'fill':
      produced = await batched(false);
      break;
    case 'W2':
      produced = await oneAtATime();
      break;
    case 'W3':
      produced = await durable();
      break;
    case 'W4':
      await read();
      break;
    case 'W5':
      produced = await openLoop();
      break;
    case 'W6':
      produced = await longPoll();
      break;
  }
  if (produced >= 0) {
    const stored = await driver.stored();
    if (stored !== produced) fail(`stored ${stored} records, expected ${produced}`);
  }
  driver.close();
}

try {
  await main();
} catch (e) {
  fail(String((e as Error).stack ?? e));
}
process.stdout.write(`${JSON.stringify({ figures, notes })}\n`);
process.exit(failed ? 1 : 0);
