/**
 * The cluster, measured: a real etcd and two broker processes on this machine, data on a real disk.
 *
 *   1. W1 (batches of 100 records of 128 B, 4 connections, 32 batches in flight each, ack WRITTEN)
 *      through a broker that proxies every batch to the partition's primary, against W1 straight to
 *      the primary, alternating, in the same run; the ratio is the figure (floor: >= 0.5).
 *   2. METADATA v1 of a topic of 1,000 partitions spread over both brokers, through one of them:
 *      the other's offsets come from one peer request, never from etcd (floor: p50 <= 1 ms).
 *   3. From a broker's SIGKILL to its partitions shown without a primary by the survivor (its LIST
 *      watch fires), with the default lease of 5,000 ms.
 *
 *   npm run bench:cluster                 5 repetitions
 *   npm run bench:cluster -- --reps=3 --records=200000
 */
import fs from 'node:fs';
import path from 'node:path';
import { startEtcd } from '@booblik/cluster/testing';
import { encodeMetadataRequest } from '@booblik/protocol';
import {
  apply,
  type Broker,
  check,
  kill,
  ListWatch,
  option,
  portOf,
  startBroker,
  Wire,
  w1 as w1Into,
} from './cluster-harness.js';
import { benchDataDir, fsTypeOf } from './data-dir.js';
import { fmt, quantile, spread } from './stats.js';

const reps = Number(option('reps') ?? 5);
const w1Records = Number(option('records') ?? 500_000);
const METADATA_REQUESTS = 500;

// -------------------------------------------------------------------------------------- workloads

/** W1 into partition 0 of `topic` through `address`: records per second. */
const w1 = (address: string, topic: string) =>
  w1Into(address, topic, { records: w1Records, batch: 100, recordBytes: 128, connections: 4, inFlight: 32 });

/** p50 and p99 (ms) of sequential METADATA v1 requests for `topic` through `address`. */
async function metadataLatency(address: string, topic: string): Promise<{ p50: number; p99: number }> {
  const wire = await Wire.connect(address);
  const frame = encodeMetadataRequest(0, { topics: [topic] });
  // Warmed up first: the first few hundred answers run in the interpreter, not the JIT.
  for (let i = 0; i < 500; i++) check(await wire.request(Buffer.from(frame)), 'METADATA');
  const times: number[] = [];
  for (let i = 0; i < METADATA_REQUESTS; i++) {
    const t = performance.now();
    check(await wire.request(Buffer.from(frame)), 'METADATA');
    times.push(performance.now() - t);
  }
  wire.close();
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** Milliseconds from SIGKILL of `victim` to `observer` listing none of its partitions with a primary. */
async function noPrimaryAfterKill(observer: string, victim: Broker): Promise<number> {
  const watch = await ListWatch.open(observer);
  const killed = performance.now();
  await kill(victim, 'SIGKILL');
  await watch.until(
    (l) => l.topics.every((t) => t.routes.every((r) => r.primary !== victim.address)),
    'the dead broker no longer routed',
    30_000,
  );
  const ms = performance.now() - killed;
  watch.close();
  return ms;
}

// ------------------------------------------------------------------------------------------- main

const root = benchDataDir('booblik-bench-cluster-');
const etcd = await startEtcd({ dataDir: path.join(root, 'etcd') });
const brokers: Broker[] = [];
try {
  process.stdout.write(`data on ${fsTypeOf(root)} (${root}); etcd ${etcd.endpoint}; ${reps} repetitions\n`);
  // b2 alone first: the W1 topic is created while it is the only member, so it owns the partition.
  const b2 = await startBroker('b2', root, etcd.endpoint);
  brokers.push(b2);
  await apply(b2.address, 'w1', 1);
  const b1 = await startBroker('b1', root, etcd.endpoint);
  brokers.push(b1);
  await apply(b1.address, 'wide', 1000);

  const direct: number[] = [];
  const proxied: number[] = [];
  const ratios: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    // Alternate which goes first, so a drift of the shared machine favours neither.
    const first = rep % 2 === 0;
    const a = first ? await w1(b2.address, 'w1') : 0;
    const p = await w1(b1.address, 'w1');
    const d = first ? a : await w1(b2.address, 'w1');
    direct.push(d);
    proxied.push(p);
    ratios.push(p / d);
    process.stdout.write(
      `  W1 rep ${rep + 1}: direct ${fmt(d)} rec/s, through a proxy ${fmt(p)} rec/s (${(p / d).toFixed(2)}x)\n`,
    );
  }
  const md = [];
  for (let rep = 0; rep < reps; rep++) md.push(await metadataLatency(b1.address, 'wide'));
  process.stdout.write(
    `  METADATA of 1,000 partitions (half on the peer): p50 ${md.map((m) => m.p50.toFixed(3)).join(', ')} ms\n`,
  );

  const kills: number[] = [];
  for (let rep = 0; rep < Math.min(reps, 3); rep++) {
    kills.push(await noPrimaryAfterKill(b1.address, b2));
    b2.child = (await startBroker('b2', root, etcd.endpoint, portOf(b2))).child;
    process.stdout.write(`  SIGKILL rep ${rep + 1}: no primary after ${fmt(kills[rep]!)} ms\n`);
  }

  const s = (values: number[], digits = 0) => {
    const x = spread(values);
    return `${fmt(x.median, digits)} (${fmt(x.min, digits)}..${fmt(x.max, digits)})`;
  };
  process.stdout.write(
    [
      '',
      '| figure | median (min..max) | floor |',
      '|---|---|---|',
      `| W1 straight to the primary, records/s | ${s(direct)} | |`,
      `| W1 through a proxying broker, records/s | ${s(proxied)} | |`,
      `| proxied / direct, same run | ${s(ratios, 2)} | >= 0.5 |`,
      `| METADATA v1, 1,000 partitions over 2 brokers, p50 ms | ${s(
        md.map((m) => m.p50),
        3,
      )} | <= 1 |`,
      `| METADATA v1, 1,000 partitions over 2 brokers, p99 ms | ${s(
        md.map((m) => m.p99),
        3,
      )} | |`,
      `| SIGKILL to "no primary" (lease 5,000 ms), ms | ${s(kills)} | |`,
      '',
    ].join('\n'),
  );
} finally {
  await Promise.all(brokers.map((b) => kill(b, 'SIGKILL')));
  await etcd.cleanup();
  fs.rmSync(root, { recursive: true, force: true });
}
