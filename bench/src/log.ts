/**
 * The partition log in-process, on a real disk: append throughput (WRITTEN, 64 B and 1 KiB records,
 * batches of 1 and 100), FORCED with 1, 8 and 64 concurrent producers (records/s and records per
 * fdatasync), and recovery of a 1 GiB log with a warm page cache (seconds per GiB).
 *
 *   npm run bench:log                 # RUNS=5 by default; RECOVERY_GIB=1
 */
import fs from 'node:fs';
import { defaultLogConfig, Partition } from '@booblik/log';
import { AckPolicy, type AckPolicyValue } from '@booblik/protocol';
import { benchDataDir, fsTypeOf } from './data-dir.js';
import { fmt, spread } from './stats.js';

const runs = Number(process.env.RUNS ?? 5);
const recoveryGiB = Number(process.env.RECOVERY_GIB ?? 1);

function wireBatch(recordBytes: number, count: number): { records: Buffer; count: number } {
  const records = Buffer.alloc((4 + recordBytes) * count);
  for (let i = 0; i < count; i++) {
    const at = i * (4 + recordBytes);
    records.writeInt32BE(recordBytes, at);
    for (let j = 0; j < recordBytes; j++) records[at + 4 + j] = (i * 31 + j) & 0xff;
  }
  return { records, count };
}

function openFresh(segmentBytesMax = defaultLogConfig.segmentBytesMax) {
  const dir = benchDataDir('booblik-bench-log-');
  const { partition } = Partition.open(dir, 'bench', 0, { ...defaultLogConfig, segmentBytesMax });
  return { dir, partition };
}

/** Keeps `inFlight` appends outstanding until `totalRecords` are acknowledged; records/s. */
async function appendThroughput(
  recordBytes: number,
  batchRecords: number,
  totalRecords: number,
): Promise<number> {
  const { dir, partition } = openFresh();
  const batch = wireBatch(recordBytes, batchRecords);
  const batches = Math.ceil(totalRecords / batchRecords);
  const inFlight = 256;
  let issued = 0;
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    let done = 0;
    const issue = () => {
      issued++;
      partition.append(batch, AckPolicy.WRITTEN).then(() => {
        if (++done === batches) resolve();
        else if (issued < batches) issue();
      }, reject);
    };
    for (let i = 0; i < Math.min(inFlight, batches); i++) issue();
  });
  const seconds = (performance.now() - started) / 1000;
  await partition.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return (batches * batchRecords) / seconds;
}

/** `producers` loops, each appending one record and awaiting it; records/s and records per fdatasync. */
async function producers(count: number, ack: AckPolicyValue, seconds: number) {
  const { dir, partition } = openFresh();
  const batch = wireBatch(128, 1);
  const deadline = performance.now() + seconds * 1000;
  let records = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, async () => {
      while (performance.now() < deadline) {
        await partition.append(batch, ack);
        records++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const stats = partition.writerStats;
  await partition.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    recordsPerSecond: records / elapsed,
    recordsPerSync: stats.records / Math.max(1, stats.forcedSyncs),
  };
}

/** Writes `gib` GiB of 128-byte records, closes, and times a fresh open (the recovery scan). */
async function recovery(gib: number): Promise<{ secondsPerGiB: number; bytes: number }[]> {
  const { dir, partition } = openFresh();
  const batch = wireBatch(128, 1000);
  const target = gib * 1024 ** 3;
  while (partition.sizeBytes < target) {
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 64; i++) pending.push(partition.append(batch, AckPolicy.WRITTEN));
    await Promise.all(pending);
  }
  await partition.close();
  const results: { secondsPerGiB: number; bytes: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const { partition: reopened, report } = Partition.open(dir, 'bench', 0, defaultLogConfig);
    results.push({
      secondsPerGiB: report.recoveryMs / 1000 / (report.bytes / 1024 ** 3),
      bytes: report.bytes,
    });
    await reopened.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return results;
}

async function repeat<T>(n: number, f: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

const cell = (values: number[], digits = 0) => {
  const s = spread(values);
  return `${fmt(s.min, digits)} / **${fmt(s.median, digits)}** / ${fmt(s.max, digits)}`;
};

const probe = benchDataDir('booblik-bench-probe-');
console.log(
  `# log benchmark: node ${process.version}, data on ${fsTypeOf(probe)}, ${runs} runs (min / median / max)`,
);
fs.rmSync(probe, { recursive: true, force: true });

console.log('\n| append, WRITTEN | records/s |');
console.log('|---|---:|');
for (const [bytes, batchRecords, total] of [
  [64, 1, 300_000],
  [64, 100, 3_000_000],
  [1024, 1, 200_000],
  [1024, 100, 1_000_000],
] as const) {
  await appendThroughput(bytes, batchRecords, total / 10); // warm up
  const values = await repeat(runs, () => appendThroughput(bytes, batchRecords, total));
  console.log(`| ${bytes} B records, batches of ${batchRecords} | ${cell(values)} |`);
}

console.log('\n| FORCED, one 128 B record per append | records/s | records per fdatasync |');
console.log('|---|---:|---:|');
const forced: Record<number, number> = {};
for (const count of [1, 8, 64]) {
  const results = await repeat(runs, () => producers(count, AckPolicy.FORCED, 2));
  forced[count] = spread(results.map((r) => r.recordsPerSecond)).median;
  console.log(
    `| ${count} producer${count > 1 ? 's' : ''} | ${cell(results.map((r) => r.recordsPerSecond))} | ${cell(
      results.map((r) => r.recordsPerSync),
      1,
    )} |`,
  );
}
console.log(`\nFORCED 64 producers / 1 producer (medians): ${fmt(forced[64]! / forced[1]!, 1)}x`);

if (recoveryGiB > 0) {
  const results = await recovery(recoveryGiB);
  console.log(
    `\n| recovery of ${fmt(results[0]!.bytes / 1024 ** 3, 2)} GiB of 128 B records, warm page cache | seconds per GiB |`,
  );
  console.log('|---|---:|');
  console.log(
    `| open (scan every record, CRC-32C, rebuild the index) | ${cell(
      results.map((r) => r.secondsPerGiB),
      3,
    )} |`,
  );
}
