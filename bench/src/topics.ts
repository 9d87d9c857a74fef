/**
 * Topics at runtime, at scale: 10,000 topics of one partition created with APPLY in batches of
 * 1,000, then LIST of all, METADATA of all, the broker's RSS and open files with 10,000 idle
 * partitions, a restart with all of them, and PRODUCE/FETCH beside 10,000 idle partitions against
 * the same on a broker with one topic (same run, as a ratio).
 *
 *   npm run bench:topics                     10,000 topics (the issue's floors)
 *   npm run bench:topics -- --topics=2000    a smaller run
 *
 * The broker runs as its own process (packages/broker/dist/main.js) on a real disk (benchDataDir).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@booblik/client';
import { benchDataDir, fsTypeOf } from './data-dir.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const brokerMain = path.resolve(here, '../../packages/broker/dist/main.js');

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const topicCount = Number(option('topics') ?? 10_000);
const batchSize = 1_000;
const repetitions = 5;

/** The issue's floors, for 10,000 topics. */
const floors = { applyAllMs: 10_000, listMs: 200, startupMs: 5_000, rssMiB: 512 };

interface Running {
  child: ChildProcess;
  address: string;
  /** From spawn to the `booblik listening` line. */
  startupMs: number;
}

function startBroker(dataDir: string, topics: string): Promise<Running> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      brokerMain,
      '--port=0',
      '--http.port=-1',
      `--data.dir=${dataDir}`,
      `--topics=${topics}`,
      '--metrics.interval.millis=0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      // Keep only the tail: 10,000 recovery lines would make this quadratic.
      if (out.length > 65_536) out = out.slice(-4096);
      const m = /booblik listening on (\S+):(\d+)/.exec(out);
      if (m) resolve({ child, address: `${m[1]}:${m[2]}`, startupMs: performance.now() - started });
    });
    child.once('exit', (code) => reject(new Error(`broker exited ${code} before listening`)));
  });
}

async function stopBroker(r: Running): Promise<void> {
  const exited = new Promise((resolve) => r.child.once('exit', resolve));
  r.child.kill('SIGTERM');
  await exited;
}

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

function openFiles(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await work();
  return [performance.now() - started, value];
}

/** Records per second, the median of three rounds of 100,000 records each. */
async function produceFetch(
  c: Connection,
  topic: string,
): Promise<{ producePerS: number; fetchPerS: number }> {
  const rounds: { producePerS: number; fetchPerS: number }[] = [];
  for (let i = 0; i < 3; i++) rounds.push(await produceFetchRound(c, topic));
  return {
    producePerS: median(rounds.map((r) => r.producePerS)),
    fetchPerS: median(rounds.map((r) => r.fetchPerS)),
  };
}

/** One round: PRODUCE batches of 100 x 100 B (WRITTEN, 8 in flight), then FETCH them back from where they start. */
async function produceFetchRound(
  c: Connection,
  topic: string,
): Promise<{ producePerS: number; fetchPerS: number }> {
  const batches = 1_000;
  const start = (await c.metadata(topic))[0]!.partitions[0]!.highWatermark;
  const records = Array.from({ length: 100 }, () => Buffer.alloc(100, 7));
  const [produceMs] = await timed(async () => {
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < batches; i++) {
      inFlight.push(c.produce(topic, 0, records));
      if (inFlight.length >= 8) await inFlight.shift();
    }
    await Promise.all(inFlight);
  });
  const [fetchMs] = await timed(async () => {
    let offset = start;
    while (offset < start + batches * 100) {
      const r = await c.fetch({ topic, partition: 0, offset, maxBytes: 1 << 20 });
      offset = r.nextOffset;
    }
  });
  return { producePerS: (batches * 100) / (produceMs / 1000), fetchPerS: (batches * 100) / (fetchMs / 1000) };
}

const line = (label: string, value: string, floor?: string) =>
  console.log(`${label.padEnd(44)} ${value.padStart(12)}${floor ? `   (floor ${floor})` : ''}`);

const dataDir = benchDataDir('booblik-topics-');
const baselineDir = benchDataDir('booblik-topics-base-');
try {
  console.log(
    `topics benchmark: ${topicCount} topics of 1 partition, APPLY batches of ${batchSize}; ` +
      `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? '?'}, data on ${fsTypeOf(dataDir)}, node ${process.version}, ${new Date().toISOString()}`,
  );
  // The baseline: PRODUCE and FETCH on a broker with one topic.
  const base = await startBroker(baselineDir, 'bench:1');
  const baseConn = await Connection.connect(base.address);
  const baseRss = rssMiB(base.child.pid!);
  const baseFds = openFiles(base.child.pid!);
  await produceFetchRound(baseConn, 'bench'); // warm up
  const baseline = await produceFetch(baseConn, 'bench');
  await baseConn.close();
  await stopBroker(base);

  const first = await startBroker(dataDir, 'bench:1');
  const c = await Connection.connect(first.address);
  const names = Array.from({ length: topicCount }, (_, i) => `topic-${String(i).padStart(5, '0')}`);
  const batchMs: number[] = [];
  const [applyAllMs] = await timed(async () => {
    for (let i = 0; i < names.length; i += batchSize) {
      const [ms] = await timed(() =>
        c.applyTopics(
          names.slice(i, i + batchSize).map((name, k) => ({
            op: 'upsert' as const,
            spec: { name, partitions: 1, labels: { group: String((i + k) % 10) }, revision: 0 },
          })),
        ),
      );
      batchMs.push(ms);
    }
  });
  line(`APPLY ${topicCount} topics (batches of ${batchSize})`, `${(applyAllMs / 1000).toFixed(2)} s`, '10 s');
  line(
    '  one batch of 1,000: median / slowest',
    `${median(batchMs).toFixed(0)} / ${Math.max(...batchMs).toFixed(0)} ms`,
  );

  const listMs: number[] = [];
  let listed = 0;
  for (let i = 0; i < repetitions; i++) {
    const [ms, listing] = await timed(() => c.listTopics());
    listMs.push(ms);
    listed = listing.topics.length;
  }
  line(
    `LIST of all (${listed} topics), median of ${repetitions}`,
    `${median(listMs).toFixed(1)} ms`,
    '200 ms',
  );
  const [selectorMs, selected] = await timed(() => c.listTopics('group in (3,7)'));
  line(`LIST with a selector (${selected.topics.length} match)`, `${selectorMs.toFixed(1)} ms`);

  const metadataMs: number[] = [];
  for (let i = 0; i < repetitions; i++) metadataMs.push((await timed(() => c.metadata()))[0]);
  line(`METADATA of all, median of ${repetitions}`, `${median(metadataMs).toFixed(1)} ms`);

  const idleRss = rssMiB(first.child.pid!);
  const idleFds = openFiles(first.child.pid!);
  line(`broker RSS with ${topicCount + 1} idle partitions`, `${idleRss.toFixed(0)} MiB`, '512 MiB');
  line('  with 1 partition (a fresh broker, idle too)', `${baseRss.toFixed(0)} MiB`);
  line(`  per idle partition`, `${(((idleRss - baseRss) * 1024) / topicCount).toFixed(1)} KiB`);
  line(`open files: ${topicCount + 1} partitions / 1`, `${idleFds} / ${baseFds}`);

  await produceFetchRound(c, 'bench'); // warm up
  const beside = await produceFetch(c, 'bench');
  await c.close();
  await stopBroker(first);

  const second = await startBroker(dataDir, 'bench:1');
  line(
    `startup with ${topicCount + 1} partitions (spawn to listening)`,
    `${(second.startupMs / 1000).toFixed(2)} s`,
    '5 s',
  );
  const restartedRss = rssMiB(second.child.pid!);
  line('  RSS after that startup', `${restartedRss.toFixed(0)} MiB`);
  await stopBroker(second);

  line(
    'PRODUCE records/s: 1 topic / beside 10,000',
    `${baseline.producePerS.toFixed(0)} / ${beside.producePerS.toFixed(0)}`,
  );
  line('  ratio (beside / alone)', (beside.producePerS / baseline.producePerS).toFixed(2));
  line(
    'FETCH records/s: 1 topic / beside 10,000',
    `${baseline.fetchPerS.toFixed(0)} / ${beside.fetchPerS.toFixed(0)}`,
  );
  line('  ratio (beside / alone)', (beside.fetchPerS / baseline.fetchPerS).toFixed(2));

  if (topicCount === 10_000) {
    const missed = [
      applyAllMs > floors.applyAllMs && 'APPLY',
      median(listMs) > floors.listMs && 'LIST',
      second.startupMs > floors.startupMs && 'startup',
      idleRss > floors.rssMiB && 'RSS',
    ].filter(Boolean);
    console.log(missed.length === 0 ? 'every floor met' : `floors missed: ${missed.join(', ')}`);
    process.exitCode = missed.length === 0 ? 0 : 1;
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(baselineDir, { recursive: true, force: true });
}
