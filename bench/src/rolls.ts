/**
 * A sustained W1 across segment rolls: W1's shape (4 connections, 4 requests of 100 x 128 B records
 * in flight on each, WRITTEN) writing one partition of a fresh broker without a pause, in passes of
 * 1,000,000 records; each pass's records/s, the passes that held a roll marked. It tells what a roll
 * costs the write path from the machine's noise: a pass with a roll against the passes without.
 *
 *   npm run bench:rolls                                  16 passes, default 512 MiB segments (a roll every ~4 passes)
 *   npm run bench:rolls -- --reps=3 --passes=24 --segment-mib=64
 *
 * The broker runs as its own process on a real disk (benchDataDir); the load is driven from this one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDataDir, fsTypeOf } from './data-dir.js';
import { fmt } from './stats.js';
import { makeDriver, RecordPool, TOPIC } from './suite/drivers.js';
import { startBooblik } from './suite/servers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const reps = Number(option('reps') ?? 1);
const passes = Number(option('passes') ?? 16);
const passRecords = Number(option('pass-records') ?? 1_000_000);
/** Unset: the broker's default segment capacity. */
const segmentMiB = option('segment-mib');
const RECORD_BYTES = 128;
const BATCH = 100;
const W1_SHAPE = { connections: 4, inFlight: 4 };

interface Pass {
  recordsPerSecond: number;
  /** Segments the pass started. */
  rolls: number;
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor((s.length - 1) / 2)]!;
};

const segmentsIn = (dir: string) => fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length;

async function sustained(rep: number): Promise<Pass[]> {
  const dataDir = benchDataDir('booblik-bench-rolls-');
  const server = await startBooblik({
    repoRoot,
    dataDir,
    logFile: path.join(dataDir, 'broker.log'),
    flags: segmentMiB === undefined ? [] : [`--segment.capacity.bytes=${Number(segmentMiB) * 2 ** 20}`],
  });
  const partitionDir = path.join(dataDir, `${TOPIC}-0`);
  const driver = makeDriver('booblik', {
    port: server.port,
    pool: new RecordPool(RECORD_BYTES),
    forced: false,
  });
  const handles = await Promise.all(Array.from({ length: W1_SHAPE.connections }, () => driver.open()));
  const out: Pass[] = [];
  try {
    let next = 0;
    for (let p = 0; p < passes; p++) {
      const requests = Math.floor(passRecords / BATCH);
      const before = segmentsIn(partitionDir);
      let issued = 0;
      const t0 = performance.now();
      await Promise.all(
        handles.flatMap((h) =>
          Array.from({ length: W1_SHAPE.inFlight }, async () => {
            while (issued < requests) await h.produce(BATCH, next + issued++ * BATCH);
          }),
        ),
      );
      const seconds = (performance.now() - t0) / 1000;
      next += requests * BATCH;
      out.push({ recordsPerSecond: (requests * BATCH) / seconds, rolls: segmentsIn(partitionDir) - before });
    }
  } finally {
    for (const h of handles) h.close();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.stderr.write(
    `# rep ${rep}: ${out.map((p) => `${(p.recordsPerSecond / 1e6).toFixed(2)}${p.rolls > 0 ? '*' : ''}`).join(' ')} M records/s per pass (* = a roll)\n`,
  );
  return out;
}

const probe = benchDataDir('booblik-bench-rolls-probe-');
const fsType = fsTypeOf(probe);
fs.rmSync(probe, { recursive: true, force: true });
const loadBefore = os.loadavg();
process.stderr.write(
  `# ${reps} rep(s) of ${passes} passes of ${fmt(passRecords)} records, segments ${segmentMiB ?? 'default'} MiB, data on ${fsType}, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}\n`,
);
const withRoll: number[] = [];
const without: number[] = [];
const ratios: number[] = [];
for (let rep = 1; rep <= reps; rep++) {
  // The first pass is the warm-up (as W1 has one): the JIT, not the log.
  const measured = (await sustained(rep)).slice(1);
  const a = measured.filter((p) => p.rolls > 0).map((p) => p.recordsPerSecond);
  const b = measured.filter((p) => p.rolls === 0).map((p) => p.recordsPerSecond);
  withRoll.push(...a);
  without.push(...b);
  ratios.push(median(a) / median(b));
}
const loadAfter = os.loadavg();
console.log(`| sustained W1, passes of ${fmt(passRecords)} records | median records/s | passes |`);
console.log('|---|---:|---:|');
console.log(`| passes with a roll | ${fmt(median(withRoll))} | ${withRoll.length} |`);
console.log(`| passes without | ${fmt(median(without))} | ${without.length} |`);
console.log(
  `| with / without, per rep | ${ratios.map((r) => r.toFixed(2)).join(', ')} | |\n\nload average ${loadBefore
    .map((l) => l.toFixed(2))
    .join(' ')} at the start, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} at the end`,
);
