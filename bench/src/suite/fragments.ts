/**
 * F rows: fragment stores. In one run, per store (file:// in a temporary directory, and s3:// on the
 * S3-compatible gateway the store's test kit starts on loopback):
 *   F1  read-through from the start of a partition whose history is only in the store, after a broker
 *       restart (its store cache cold), MiB/s of payload, beside a local read of the same bytes;
 *   F2  the upload backlog (closed segments not yet in the store) sampled while W1's shape writes;
 *   F3  store requests per GiB written (uploads, manifests, the manifest read at start), measured.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Connection, FragmentLocation } from '@booblik/client';
import { S3TestServer } from '@booblik/store/test-support/s3-server';
import type { Row } from './report.js';
import { type Server, scrapeMetrics, startBooblik } from './servers.js';

const OURS = 'booblik';
const RECORD_BYTES = 1024;
const BATCH = 100;
const FETCH_BYTES = 1 << 20;

export interface FragmentBenchContext {
  repoRoot: string;
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
  // W1's shape: 4 connections, 4 batches of 100 in flight on each.
  const producers = await Promise.all(
    Array.from({ length: 4 }, () => Connection.connect(`127.0.0.1:${writer.port}`)),
  );
  let next = 0;
  await Promise.all(
    producers.flatMap((p) =>
      Array.from({ length: 4 }, async () => {
        while (next < batches) {
          next++;
          await p.produce('stored', 0, batch);
          await p.produce('bench', 0, batch); // the same bytes, local only: the comparison read
        }
      }),
    ),
  );
  for (const p of producers) await p.close();
  sampling = false;
  await sampler;
  row(
    `F2 upload backlog under W1 (${kind})`,
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
      `F ${kind}: read-through ${through.toFixed(1)} MiB/s, local ${local.toFixed(1)} MiB/s, backlog max ${maxBacklog}, ${perGiB.toFixed(0)} requests/GiB`,
    );
  } finally {
    await c.close();
    await stop(reader);
  }
  return rows;
}
