/**
 * What the cluster benchmarks share: broker processes started from the real entry point against a
 * real etcd, a pipelined wire client of raw frames, topics created by APPLY, a LIST watch, and W1.
 * The load runs in the bench process, never a broker's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AckPolicy,
  type AckPolicyValue,
  decodeApplyResponse,
  decodeListResponse,
  encodeApplyRequest,
  encodeListRequest,
  encodeProduceRequest,
  errorName,
  FrameSplitter,
  type ListResponse,
  lengthPrefixBytes,
  readResponseFrame,
  responseFrameLimits,
  topicSpecWithDefaults,
} from '@booblik/protocol';

const here = path.dirname(fileURLToPath(import.meta.url));
const brokerMain = path.resolve(here, '../../packages/broker/dist/main.js');

/** `--name=value` from the command line. */
export const option = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

// ----------------------------------------------------------------------------------- a wire client

/** One pipelined connection: frames written as given, answers matched in order. */
export class Wire {
  private readonly waiting: { resolve(frame: Buffer): void; reject(error: Error): void }[] = [];
  private nextId = 1;
  private closedBy: Error | undefined;
  private constructor(private readonly socket: net.Socket) {
    const splitter = new FrameSplitter(responseFrameLimits, { chunksOwned: true });
    const sink = {
      frame: (f: Buffer) => this.waiting.shift()?.resolve(f),
      shortFrame: () => socket.destroy(),
      invalidLength: () => socket.destroy(),
    };
    socket.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
    // A broker killed under a request: what waits on it fails instead of hanging.
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closedBy = new Error('connection closed');
      for (const w of this.waiting.splice(0)) w.reject(this.closedBy);
    });
  }

  static connect(address: string): Promise<Wire> {
    const colon = address.lastIndexOf(':');
    return new Promise((resolve, reject) => {
      const socket = net.connect(
        { host: address.slice(0, colon), port: Number(address.slice(colon + 1)), noDelay: true },
        () => {
          socket.off('error', reject);
          resolve(new Wire(socket));
        },
      );
      socket.once('error', reject);
    });
  }

  /** Sends one frame (its correlation id rewritten); resolves with the answer's frame. */
  request(frame: Buffer): Promise<Buffer> {
    if (this.closedBy !== undefined) return Promise.reject(this.closedBy);
    frame.writeInt32BE(this.nextId++, lengthPrefixBytes + 4);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.write(frame);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

export function check(frame: Buffer, what: string): Buffer {
  const r = readResponseFrame(frame);
  if (r.errorCode !== 0) throw new Error(`${what}: ${errorName(r.errorCode)} (${r.errorCode})`);
  return r.body;
}

/** Rejects if `promise` has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// ------------------------------------------------------------------------------------------ brokers

export interface Broker {
  name: string;
  child: ChildProcess;
  address: string;
  /** The end of what it printed (its log), for a failure's report. */
  recentOutput(): string;
}

const OUTPUT_KEPT_CHARS = 64 * 1024;

/** A broker process on loopback, data under `dataDir/name`; resolves once it listens. */
export function startBroker(
  name: string,
  dataDir: string,
  etcd: string,
  port = 0,
  flags: readonly string[] = [],
  /** Flags for node itself, e.g. `--cpu-prof`. */
  nodeFlags: readonly string[] = [],
): Promise<Broker> {
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      brokerMain,
      `--port=${port}`,
      '--http.port=-1',
      `--data.dir=${path.join(dataDir, name)}`,
      `--cluster.etcd=${etcd}`,
      `--broker.id=${name}`,
      `--broker.zone=${name}`,
      '--topics=default:1',
      '--metrics.interval.millis=0',
      ...flags,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let listening = false;
    child.stdout!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-OUTPUT_KEPT_CHARS);
      const m = listening ? null : /booblik listening on (\S+):(\d+)/.exec(out);
      if (m) {
        listening = true;
        resolve({ name, child, address: `${m[1]}:${m[2]}`, recentOutput: () => out });
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited ${code} before listening`)));
  });
}

/** The port a broker listens on, to restart it where its peers and clients expect it. */
export const portOf = (broker: Broker) => Number(broker.address.slice(broker.address.lastIndexOf(':') + 1));

export function kill(broker: Broker, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (broker.child.exitCode !== null || broker.child.signalCode !== null) return resolve();
    broker.child.once('exit', () => resolve());
    process.kill(broker.child.pid!, signal);
  });
}

/** Creates (or changes) a topic through `via`, with `replication` copies of each partition. */
export async function apply(via: string, name: string, partitions: number, replication = 1): Promise<void> {
  const wire = await Wire.connect(via);
  const spec = { ...topicSpecWithDefaults({ name, partitions, revision: 0 }), replication };
  decodeApplyResponse(
    check(
      await wire.request(encodeApplyRequest(0, { dryRun: false, changes: [{ op: 'upsert', spec }] })),
      'APPLY',
    ),
  );
  wire.close();
}

/** Deletes a topic through `via` (its files go with it on every broker). */
export async function remove(via: string, name: string): Promise<void> {
  const wire = await Wire.connect(via);
  check(
    await wire.request(
      encodeApplyRequest(0, { dryRun: false, changes: [{ op: 'delete', name, expectedRevision: -1 }] }),
    ),
    'APPLY delete',
  );
  wire.close();
}

// ------------------------------------------------------------------------------------------ watching

/** How long a held LIST waits before the listing is asked again (see `until`). */
const RELIST_MS = 100;

/** A LIST held as a watch on one broker: each wait ends when the cluster's copy changes there. */
export class ListWatch {
  private constructor(
    private readonly wire: Wire,
    public listing: ListResponse,
  ) {}

  static async open(address: string): Promise<ListWatch> {
    const wire = await Wire.connect(address);
    return new ListWatch(wire, await ListWatch.list(wire, -1, 0));
  }

  private static async list(wire: Wire, watch: number, waitMs: number): Promise<ListResponse> {
    return decodeListResponse(
      check(
        await wire.request(encodeListRequest(0, { selector: '', watchRevision: watch, maxWaitMs: waitMs })),
        'LIST',
      ),
    );
  }

  /**
   * Waits until the listing satisfies `done`, at most `timeoutMs`; returns the listing. A route can
   * change without a new revision (a replicated partition's new primary is routed once it has
   * committed what it found), so a wait is held at most `relistMs` before the listing is asked again.
   */
  async until(
    done: (l: ListResponse) => boolean,
    what: string,
    timeoutMs: number,
    relistMs = RELIST_MS,
  ): Promise<ListResponse> {
    const start = performance.now();
    while (!done(this.listing)) {
      const left = timeoutMs - (performance.now() - start);
      if (left <= 0) throw new Error(`${what}: not within ${timeoutMs} ms`);
      const next = await ListWatch.list(
        this.wire,
        this.listing.revision,
        Math.ceil(Math.min(left, relistMs)),
      );
      // No topics at the same revision: the wait ended with nothing changed.
      this.listing = next.topics.length > 0 ? next : await ListWatch.list(this.wire, -1, 0);
    }
    return this.listing;
  }

  /** The listing as it is now, without waiting. */
  async refresh(): Promise<ListResponse> {
    this.listing = await ListWatch.list(this.wire, -1, 0);
    return this.listing;
  }

  /** The route of partition `partition` of `topic` in the current listing. */
  route(topic: string, partition = 0) {
    return this.listing.topics.find((t) => t.spec.name === topic)?.routes[partition];
  }

  close(): void {
    this.wire.close();
  }
}

// -------------------------------------------------------------------------------------- workloads

export interface W1Options {
  records: number;
  batch: number;
  recordBytes: number;
  connections: number;
  inFlight: number;
  ack?: AckPolicyValue;
}

/** W1 into partition 0 of `topic` through `address`: records per second. */
export async function w1(address: string, topic: string, o: W1Options): Promise<number> {
  const records = Array.from({ length: o.batch }, (_, i) => Buffer.alloc(o.recordBytes, i));
  const template = encodeProduceRequest(0, { topic, partition: 0, ack: o.ack ?? AckPolicy.WRITTEN, records });
  const batches = Math.ceil(o.records / o.batch);
  const wires = await Promise.all(Array.from({ length: o.connections }, () => Wire.connect(address)));
  let sent = 0;
  const start = performance.now();
  try {
    await Promise.all(
      wires.map(async (wire) => {
        const lane = async () => {
          while (sent < batches) {
            sent++;
            check(await wire.request(Buffer.from(template)), 'PRODUCE');
          }
        };
        await Promise.all(Array.from({ length: o.inFlight }, lane));
      }),
    );
  } finally {
    for (const w of wires) w.close();
  }
  const seconds = (performance.now() - start) / 1000;
  return (batches * o.batch) / seconds;
}
