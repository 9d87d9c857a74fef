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
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEtcd } from '@booblik/cluster/testing';
import {
  decodeApplyResponse,
  decodeListResponse,
  encodeApplyRequest,
  encodeListRequest,
  encodeMetadataRequest,
  encodeProduceRequest,
  FrameSplitter,
  lengthPrefixBytes,
  readResponseFrame,
  responseFrameLimits,
  topicSpecWithDefaults,
} from '@booblik/protocol';
import { benchDataDir, fsTypeOf } from './data-dir.js';
import { fmt, quantile, spread } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const brokerMain = path.resolve(here, '../../packages/broker/dist/main.js');
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const reps = Number(option('reps') ?? 5);
const w1Records = Number(option('records') ?? 500_000);
const BATCH = 100;
const RECORD_BYTES = 128;
const CONNECTIONS = 4;
const IN_FLIGHT = 32;
const METADATA_REQUESTS = 500;

// ----------------------------------------------------------------------------------- a wire client

/** One pipelined connection: frames written as given, answers matched in order. */
class Wire {
  private readonly waiting: ((frame: Buffer) => void)[] = [];
  private nextId = 1;
  private constructor(private readonly socket: net.Socket) {
    const splitter = new FrameSplitter(responseFrameLimits, { chunksOwned: true });
    const sink = {
      frame: (f: Buffer) => this.waiting.shift()?.(f),
      shortFrame: () => socket.destroy(),
      invalidLength: () => socket.destroy(),
    };
    socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
  }

  static connect(address: string): Promise<Wire> {
    const colon = address.lastIndexOf(':');
    return new Promise((resolve, reject) => {
      const socket = net.connect(
        { host: address.slice(0, colon), port: Number(address.slice(colon + 1)), noDelay: true },
        () => resolve(new Wire(socket)),
      );
      socket.once('error', reject);
    });
  }

  /** Sends one frame (its correlation id rewritten); resolves with the answer's frame. */
  request(frame: Buffer): Promise<Buffer> {
    frame.writeInt32BE(this.nextId++, lengthPrefixBytes + 4);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.socket.write(frame);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

function check(frame: Buffer, what: string): Buffer {
  const r = readResponseFrame(frame);
  if (r.errorCode !== 0) throw new Error(`${what}: error ${r.errorCode}`);
  return r.body;
}

// ------------------------------------------------------------------------------------------ brokers

interface Broker {
  name: string;
  child: ChildProcess;
  address: string;
}

function startBroker(name: string, dataDir: string, etcd: string, port = 0): Promise<Broker> {
  const child = spawn(
    process.execPath,
    [
      brokerMain,
      `--port=${port}`,
      '--http.port=-1',
      `--data.dir=${path.join(dataDir, name)}`,
      `--cluster.etcd=${etcd}`,
      `--broker.id=${name}`,
      `--broker.zone=${name}`,
      '--topics=default:1',
      '--metrics.interval.millis=0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-4096);
      const m = /booblik listening on (\S+):(\d+)/.exec(out);
      if (m) resolve({ name, child, address: `${m[1]}:${m[2]}` });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited ${code} before listening`)));
  });
}

function kill(broker: Broker, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (broker.child.exitCode !== null || broker.child.signalCode !== null) return resolve();
    broker.child.once('exit', () => resolve());
    process.kill(broker.child.pid!, signal);
  });
}

async function apply(via: string, name: string, partitions: number): Promise<void> {
  const wire = await Wire.connect(via);
  const spec = topicSpecWithDefaults({ name, partitions, revision: 0 });
  decodeApplyResponse(
    check(
      await wire.request(encodeApplyRequest(0, { dryRun: false, changes: [{ op: 'upsert', spec }] })),
      'APPLY',
    ),
  );
  wire.close();
}

// -------------------------------------------------------------------------------------- workloads

/** W1 into partition 0 of `topic` through `address`: records per second. */
async function w1(address: string, topic: string): Promise<number> {
  const records = Array.from({ length: BATCH }, (_, i) => Buffer.alloc(RECORD_BYTES, i));
  const template = encodeProduceRequest(0, { topic, partition: 0, ack: 1, records });
  const batches = Math.ceil(w1Records / BATCH);
  const wires = await Promise.all(Array.from({ length: CONNECTIONS }, () => Wire.connect(address)));
  let sent = 0;
  const start = performance.now();
  await Promise.all(
    wires.map(async (wire) => {
      const lane = async () => {
        while (sent < batches) {
          sent++;
          check(await wire.request(Buffer.from(template)), 'PRODUCE');
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  for (const w of wires) w.close();
  return (batches * BATCH) / seconds;
}

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
  const wire = await Wire.connect(observer);
  const list = async (watch: number, waitMs: number) =>
    decodeListResponse(
      check(
        await wire.request(encodeListRequest(0, { selector: '', watchRevision: watch, maxWaitMs: waitMs })),
        'LIST',
      ),
    );
  let listing = await list(-1, 0);
  const killed = performance.now();
  await kill(victim, 'SIGKILL');
  for (;;) {
    const gone = listing.topics.every((t) => t.routes.every((r) => r.primary !== victim.address));
    if (gone) break;
    if (performance.now() - killed > 30_000) throw new Error('the dead broker still routed after 30 s');
    const next = await list(listing.revision, 30_000);
    if (next.topics.length > 0) listing = next;
  }
  const ms = performance.now() - killed;
  wire.close();
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
    const dataPort = Number(b2.address.slice(b2.address.lastIndexOf(':') + 1));
    b2.child = (await startBroker('b2', root, etcd.endpoint, dataPort)).child;
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
