/** What a run of the suite is: its options, the workloads' sizes and the cases (main.ts runs them). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadSpec } from './loadgen.js';
import { resolveServerNode } from './server-node.js';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../../..');

export const argv = process.argv.slice(2);
export const flag = (name: string) => argv.includes(`--${name}`);
export const option = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
export const quick = flag('quick');
export const profile = flag('profile');
export const keep = flag('keep');
export const reps = Number(option('reps') ?? (quick ? 1 : 3));
export const only = option('only')?.split(',');
/** `node-floor`: what a Node server reaches with nothing of a broker's work (node-floor.ts), in the same run. */
export const NODE_FLOOR = 'node-floor';
/** `node-floor-tls`: the same with TLS required, so what TLS costs booblik can be told from what it costs Node. */
export const NODE_FLOOR_TLS = 'node-floor-tls';
export const wantedSystems = (option('systems') ?? `booblik,redis,nats,${NODE_FLOOR}`).split(',');
export const withClient = flag('client') || (!quick && !flag('no-client'));
/** The Node the servers run under (the load generators stay on this one). */
export const serverNode = resolveServerNode(repoRoot, option('node') ?? process.env.BENCH_NODE);
/** Wait for the shared machine to be quiet before each case (not in a quick run). */
export const settle = !quick && !flag('no-settle');

/** Sizes of every workload: the full run, and the quick one. */
export const sizes = quick
  ? {
      w1Records: 100_000,
      w1Warmup: 100_000,
      w2Records: 5_000,
      w3Seconds: 1,
      w4Seconds: 0.3,
      w5Seconds: 1,
      w6: { consumers: 2, seconds: 1, idleSeconds: 1 },
      w7Bytes: 64 * 2 ** 20,
      w7Restarts: 1,
      physical: { seconds: 0.5, writeBytes: 128 * 2 ** 20 },
    }
  : {
      w1Records: 1_000_000,
      /** Unmeasured records of W1, in its shape, first: its figure is the steady state, not the JIT warming. */
      w1Warmup: 1_000_000,
      w2Records: 50_000,
      w3Seconds: 5,
      w4Seconds: 1,
      w5Seconds: 6,
      w6: { consumers: 4, seconds: 10, idleSeconds: 10 },
      w7Bytes: 2 ** 30,
      w7Restarts: Math.max(3, reps),
      physical: { seconds: 3, writeBytes: 2 ** 30 },
    };
export const RECORD_BYTES = 128;
/** Several connections, each with requests pipelined: the same shape for every system. */
export const W1_SHAPE = { connections: 4, inFlight: 4 };

export interface Case {
  name: string;
  workload: LoadSpec['workload'];
  durable: boolean;
  spec: Partial<LoadSpec>;
  /** Read back what this case wrote, on the same server (W4 after W1). */
  readBack?: Case;
  /** Also run through the full TypeScript client. */
  client?: boolean;
}

export const W4: Case = {
  name: 'W4 read from the start',
  workload: 'W4',
  durable: false,
  spec: { fetchBytes: 1 << 20, verify: true, seconds: sizes.w4Seconds },
};
export const ALL_CASES: Case[] = [
  {
    name: 'W1 batches of 100',
    workload: 'W1',
    durable: false,
    spec: { records: sizes.w1Records, batch: 100, ...W1_SHAPE, warmup: 1000, warmupRecords: sizes.w1Warmup },
    readBack: W4,
    client: true,
  },
  {
    name: 'W1 batches of 10',
    workload: 'W1',
    durable: false,
    spec: { records: sizes.w1Records, batch: 10, ...W1_SHAPE, warmup: 1000, warmupRecords: sizes.w1Warmup },
  },
  {
    name: 'W2 one record per request',
    workload: 'W2',
    durable: false,
    spec: { records: sizes.w2Records, warmup: 1000 },
    client: true,
  },
  {
    name: 'W3 durable, 8 producers',
    workload: 'W3',
    durable: true,
    spec: { producers: 8, seconds: sizes.w3Seconds, forced: true, warmup: 200 },
  },
  {
    name: 'W3 durable, 64 producers',
    workload: 'W3',
    durable: true,
    spec: { producers: 64, seconds: sizes.w3Seconds, forced: true, warmup: 640 },
  },
  {
    name: 'W5 open loop 5,000/s',
    workload: 'W5',
    durable: false,
    spec: { rate: 5000, seconds: sizes.w5Seconds, warmup: 1000 },
  },
  {
    name: 'W6 long poll',
    workload: 'W6',
    durable: false,
    spec: { ...sizes.w6, waitMs: 5000, intervalMs: 100 },
  },
];
export const CASES = ALL_CASES.filter((c) => !only || only.some((o) => c.name.startsWith(o)));
export const runW7 = !only || only.includes('W7');
export const runPhysical = !only || only.includes('physical');
export const runFragments = !only || only.includes('F');
