/**
 * F rows: fragment stores. In one run, per store (file:// in a temporary directory, and s3:// on the
 * S3-compatible gateway the store's test kit starts on loopback):
 *   F1  read-through from the start of a partition whose history is only in the store, after a broker
 *       restart (its store cache cold), MiB/s of payload, beside a local read of the same bytes;
 *   F2  the upload backlog (closed segments not yet in the store) sampled while W1's shape writes
 *       without a pause, with the default segment size, for as long as SUSTAINED_SEGMENTS segments
 *       take to close: its most, what is left when writing stops, and how long that takes to drain;
 *       also during F1's shorter burst with small segments;
 *   F3  store requests per GiB written (uploads, manifests, the manifest read at start), measured.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection, FragmentLocation } from '@booblik/client';
import { DEFAULT_SEGMENT_BYTES_MAX } from '@booblik/log';
import { S3TestServer } from '@booblik/store/test-support/s3-server';
import type { Row } from './report.js';
import { processCpuSeconds, type Server, scrapeMetrics, startBooblik } from './servers.js';

const OURS = 'booblik';
const RECORD_BYTES = 1024;
const BATCH = 100;
const FETCH_BYTES = 1 << 20;
/**
 * Segments of the default size F2 writes without a pause (8 GiB): at W1's rate here a new one closes
 * every few seconds, so uploads slower than the writes leave a backlog that grows over the run
 * instead of one a short burst could hide. A quick run writes two.
 */
const SUSTAINED_SEGMENTS = 16;
const QUICK_SUSTAINED_SEGMENTS = 2;
/** How often F2 asks the broker which closed segments are still only local. */
const SAMPLE_MS = 100;
/** A backlog still there this long after writing stopped is a failure of the run, not a figure. */
const DRAIN_TIMEOUT_MS = 300_000;

export interface FragmentBenchContext {
  repoRoot: string;
  /** The `node` the brokers run under. */
  node: string;
  dataRoot: string;
  logDir: string;
  rep: number;
  /** Bytes written per store. */
  writeBytes: number;
  segmentBytes: number;
  running: Set<Server>;
  log: (s: string) => void;
}

export async function fragmentRows(ctx: FragmentBenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const s3 = await S3TestServer.start();
  Object.assign(process.env, s3.env); // the broker process finds its credentials the standard way
  try {
    const storeDir = fs.mkdtempSync(path.join(ctx.dataRoot, 'store-'));
    const stores: [string, string][] = [
      ['file://', `file://${storeDir}`],
      ['s3://', s3.url(`bench-${ctx.rep}/`)],
    ];
    for (const [kind, url] of stores) rows.push(...(await oneStore(ctx, kind, url)));
    const sustainedStores: [string, string][] = [
      ['file://', `file://${fs.mkdtempSync(path.join(ctx.dataRoot, 'store-sustained-'))}`],
      ['s3://', s3.url(`bench-${ctx.rep}-sustained/`)],
    ];
    for (const [kind, url] of sustainedStores) {
      rows.push(...(await sustainedBacklog(ctx, kind, url, kind === 's3://' ? s3.pid : undefined)));
    }
  } finally {
    await s3.close();
  }
  return rows;
}

async function oneStore(ctx: FragmentBenchContext, kind: string, url: string): Promise<Row[]> {
  const dir = fs.mkdtempSync(path.join(ctx.dataRoot, 'fragments-'));
  const flags = [
    `--segment.capacity.bytes=${ctx.segmentBytes}`,
    '--local.retention.bytes=0', // history only in the store once persisted
    '--retention.check.millis=200',
  ];
  const start = async (name: string) => {
    const s = await startBooblik({
      repoRoot: ctx.repoRoot,
      node: ctx.node,
      dataDir: dir,
      logFile: path.join(ctx.logDir, `${name}.log`),
      flags,
    });
    ctx.running.add(s);
    return s;
  };
  const stop = async (s: Server) => {
    await s.stop();
    ctx.running.delete(s);
  };
  const rows: Row[] = [];
  const row = (kase: string, metric: string, unit: string, value: number) =>
    rows.push({ case: kase, system: OURS, metric, unit, value, rep: ctx.rep });

  const writer = await start(`f-${kind.slice(0, 2)}-write-${ctx.rep}`);
  let c = await Connection.connect(`127.0.0.1:${writer.port}`);
  await c.applyTopics([{ op: 'upsert', spec: { name: 'stored', partitions: 1, storeUrl: url } }]);
  const payload = Buffer.alloc(RECORD_BYTES, 0x61);
  const batch = Array.from({ length: BATCH }, () => payload);
  const batches = Math.ceil(ctx.writeBytes / (RECORD_BYTES * BATCH));
  let maxBacklog = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [p] = await c.listFragments('stored', 0);
      const closed = p!.fragments.slice(0, -1);
      maxBacklog = Math.max(maxBacklog, closed.filter((f) => f.location === FragmentLocation.LOCAL).length);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  await writeW1Shape(writer.port, batches, async (p) => {
    await p.produce('stored', 0, batch);
    await p.produce('bench', 0, batch); // the same bytes, local only: the comparison read
  });
  sampling = false;
  await sampler;
  row(
    `F2 upload backlog, ${ctx.writeBytes / 2 ** 20} MiB burst, ${ctx.segmentBytes / 2 ** 20} MiB segments (${kind})`,
    'max closed segments not yet persisted',
    'segments',
    maxBacklog,
  );

  // Every closed segment persisted and its local copy dropped.
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [p] = await c.listFragments('stored', 0);
    if (p!.fragments.slice(0, -1).every((f) => f.location === FragmentLocation.STORE)) break;
    if (Date.now() > deadline) throw new Error(`${kind}: segments still not persisted after 300 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const metrics = await scrapeMetrics(writer.httpPort!, [
    'booblik_store_requests_total',
    'booblik_store_upload_bytes_total',
  ]);
  const gib = metrics['booblik_store_upload_bytes_total']! / 2 ** 30;
  const perGiB = metrics['booblik_store_requests_total']! / gib;
  row(
    `F3 store requests per GiB written (${kind})`,
    `measured, ${ctx.segmentBytes / 2 ** 20} MiB segments`,
    'requests/GiB',
    perGiB,
  );
  await c.close();
  await stop(writer);

  // A new broker process: its store cache is empty (the machine's page cache is not).
  const reader = await start(`f-${kind.slice(0, 2)}-read-${ctx.rep}`);
  c = await Connection.connect(`127.0.0.1:${reader.port}`);
  try {
    const [p] = await c.listFragments('stored', 0);
    const storeEnd = p!.fragments.filter((f) => f.location === FragmentLocation.STORE).at(-1)!.endOffset;
    const readMiBs = async (topic: string, end: number) => {
      let offset = 0;
      let bytes = 0;
      const t0 = performance.now();
      while (offset < end) {
        const r = await c.fetch({ topic, partition: 0, offset, maxBytes: FETCH_BYTES });
        for (let i = 0; i < r.count; i++) bytes += r.payloadAt(i).length;
        offset = r.nextOffset;
      }
      return bytes / 2 ** 20 / ((performance.now() - t0) / 1000);
    };
    const local = await readMiBs('bench', storeEnd);
    const through = await readMiBs('stored', storeEnd);
    row(`F1 read from the start (${kind})`, 'local segments', 'MiB/s', local);
    row(`F1 read from the start (${kind})`, 'through the store, cold cache', 'MiB/s', through);
    row(`F1 read from the start (${kind})`, 'store / local', 'ratio', through / local);
    ctx.log(
      `F ${kind}: read-through ${through.toFixed(1)} MiB/s, local ${local.toFixed(1)} MiB/s, burst backlog max ${maxBacklog}, ${perGiB.toFixed(0)} requests/GiB`,
    );
  } finally {
    await c.close();
    await stop(reader);
  }
  return rows;
}

/** Closed segments of the partition and how many of them are not yet in the store. */
/** W1's shape: 4 connections, 4 sends in flight on each, until `batches` have been sent. */
async function writeW1Shape(port: number, batches: number, send: (c: Connection) => Promise<unknown>) {
  const producers = await Promise.all(
    Array.from({ length: 4 }, () => Connection.connect(`127.0.0.1:${port}`)),
  );
  let next = 0;
  await Promise.all(
    producers.flatMap((p) =>
      Array.from({ length: 4 }, async () => {
        while (next < batches) {
          next++;
          await send(p);
        }
      }),
    ),
  );
  for (const p of producers) await p.close();
}

async function closedAndBacklog(c: Connection): Promise<{ closed: number; backlog: number }> {
  const [p] = await c.listFragments('stored', 0);
  const closed = p!.fragments.slice(0, -1); // the last one is the active segment
  return {
    closed: closed.length,
    backlog: closed.filter((f) => f.location === FragmentLocation.LOCAL).length,
  };
}

/**
 * F2: W1's shape (4 connections, 4 batches of 100 x 1 KiB in flight on each) writes one stored
 * topic, nothing else, until SUSTAINED_SEGMENTS segments of the default size have closed. The
 * backlog is sampled throughout; the most in the second half of the run beside the most overall
 * tells a backlog that keeps growing from one that stays put.
 */
async function sustainedBacklog(
  ctx: FragmentBenchContext,
  kind: string,
  url: string,
  storePid: number | undefined,
): Promise<Row[]> {
  const quick = ctx.writeBytes < 512 * 2 ** 20;
  const segments = quick ? QUICK_SUSTAINED_SEGMENTS : SUSTAINED_SEGMENTS;
  const segmentMiB = DEFAULT_SEGMENT_BYTES_MAX / 2 ** 20;
  const dir = fs.mkdtempSync(path.join(ctx.dataRoot, 'sustained-'));
  const broker = await startBooblik({
    repoRoot: ctx.repoRoot,
    node: ctx.node,
    dataDir: dir,
    logFile: path.join(ctx.logDir, `f-${kind.slice(0, 2)}-sustained-${ctx.rep}.log`),
    // The default segment size (no flag); local copies go once persisted, so the disk holds the backlog.
    flags: ['--local.retention.bytes=0', '--retention.check.millis=200'],
  });
  ctx.running.add(broker);
  const rows: Row[] = [];
  const kase = `F2 upload backlog, sustained W1, ${segmentMiB} MiB segments (${kind})`;
  const row = (metric: string, unit: string, value: number) =>
    rows.push({ case: kase, system: OURS, metric, unit, value, rep: ctx.rep });
  const c = await Connection.connect(`127.0.0.1:${broker.port}`);
  try {
    await c.applyTopics([{ op: 'upsert', spec: { name: 'stored', partitions: 1, storeUrl: url } }]);
    const loadAtStart = os.loadavg()[0]!;
    const brokerCpu0 = broker.cpuSeconds();
    const storeCpu0 = storePid === undefined ? 0 : processCpuSeconds(storePid);
    const payload = Buffer.alloc(RECORD_BYTES, 0x61);
    const batch = Array.from({ length: BATCH }, () => payload);
    const batches = Math.ceil((segments * DEFAULT_SEGMENT_BYTES_MAX) / (RECORD_BYTES * BATCH));
    const samples: { ms: number; backlog: number }[] = [];
    let sampling = true;
    const t0 = performance.now();
    const sampler = (async () => {
      while (sampling) {
        samples.push({ ms: performance.now() - t0, backlog: (await closedAndBacklog(c)).backlog });
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      }
    })();
    await writeW1Shape(broker.port, batches, (p) => p.produce('stored', 0, batch));
    const writeMs = performance.now() - t0;
    sampling = false;
    await sampler;
    const atEnd = await closedAndBacklog(c);
    for (;;) {
      if ((await closedAndBacklog(c)).backlog === 0) break;
      if (performance.now() - t0 - writeMs > DRAIN_TIMEOUT_MS) {
        throw new Error(
          `${kind}: segments still not persisted ${DRAIN_TIMEOUT_MS / 1000} s after W1 stopped`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
    const drainS = (performance.now() - t0 - writeMs) / 1000;
    const gib = (batches * BATCH * RECORD_BYTES) / 2 ** 30;
    const most = Math.max(0, ...samples.map((s) => s.backlog));
    const mostLater = Math.max(0, ...samples.filter((s) => s.ms > writeMs / 2).map((s) => s.backlog));
    const mibs = (gib * 1024) / (writeMs / 1000);
    // The most in each tenth of the writing: flat for a bounded backlog, rising for one that is not.
    const tenths = Array.from({ length: 10 }, (_, i) =>
      Math.max(
        0,
        ...samples
          .filter((s) => s.ms >= (i * writeMs) / 10 && s.ms < ((i + 1) * writeMs) / 10)
          .map((s) => s.backlog),
      ),
    );
    row('max closed segments not yet persisted', 'segments', most);
    row('max in the second half of the run', 'segments', mostLater);
    row('not yet persisted when writing stopped', 'segments', atEnd.backlog);
    row('closed segments when writing stopped', 'segments', atEnd.closed);
    row('drained after writing stopped', 's', drainS);
    row('W1 write rate', 'MiB/s', mibs);
    row('W1 seconds of writing', 's', writeMs / 1000);
    row('broker CPU per GiB written (writes and uploads)', 's/GiB', (broker.cpuSeconds() - brokerCpu0) / gib);
    if (storePid !== undefined) {
      row('gateway CPU per GiB written', 's/GiB', (processCpuSeconds(storePid) - storeCpu0) / gib);
    }
    row('broker peak RSS', 'MiB', broker.memory().peakMiB);
    row('load average (1 min) at the start', 'load', loadAtStart);
    ctx.log(
      `F2 ${kind} sustained: ${gib.toFixed(1)} GiB in ${(writeMs / 1000).toFixed(1)} s (${mibs.toFixed(0)} MiB/s), ` +
        `${segmentMiB} MiB segments; backlog max ${most} (second half ${mostLater}), ${atEnd.backlog} of ${atEnd.closed} ` +
        `closed when writing stopped, drained ${drainS.toFixed(1)} s later; most per tenth of the run ${tenths.join(' ')}; load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
  } finally {
    await c.close();
    await broker.stop();
    ctx.running.delete(broker);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
