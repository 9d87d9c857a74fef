/**
 * One driver per system, each through its lean wire client: the same operations (produce k records and
 * await the answer, read the log from its start, tail it with a long poll) so that a workload is
 * written once and runs against every system alike.
 */
import crypto from 'node:crypto';
import { Connection } from '@booblik/client';
import {
  AckPolicy,
  crc32c,
  encodeFetchRequestV2,
  encodeProduceRequest,
  fetchWaitMsMax,
} from '@booblik/protocol';
import { type BodyStream, BooblikWire } from './wire/booblik.js';
import { NatsClient } from './wire/nats.js';
import { RespClient, type RespValue } from './wire/resp.js';

export const TOPIC = 'bench';
const REDIS_KEY = 'bench';
const NATS_STREAM = 'BENCH';
const NATS_SUBJECT = 'bench.a';

/** Distinct random records, cycled: enough variety that nothing downstream can compress or dedupe. */
export class RecordPool {
  static readonly size = 1024;
  readonly bytes: Buffer;
  constructor(readonly recordBytes: number) {
    this.bytes = crypto.randomBytes(recordBytes * RecordPool.size);
  }
  record(i: number): Buffer {
    const at = (i % RecordPool.size) * this.recordBytes;
    return this.bytes.subarray(at, at + this.recordBytes);
  }
  /**
   * The `count` records from pool index `start`, made once per distinct (start, count): an
   * application holds its records already, so slicing them per request would charge the harness's
   * work to the client being measured (it was a fifth of the client's CPU under W1).
   */
  records(start: number, count: number): Buffer[] {
    const key = count * RecordPool.size + (start % RecordPool.size);
    let out = this.arrays.get(key);
    if (out === undefined) {
      out = new Array<Buffer>(count);
      for (let i = 0; i < count; i++) out[i] = this.record(start + i);
      this.arrays.set(key, out);
    }
    return out;
  }
  private readonly arrays = new Map<number, Buffer[]>();
}

export interface ReadResult {
  records: number;
  /** Payload bytes only (no headers, ids or framing), the same measure for every system. */
  bytes: number;
}

/** A caught-up consumer: each `next` waits up to its wait for new records and returns their payloads. */
export interface Tailer {
  next(): Promise<Buffer[]>;
}

export interface Handle {
  /** Produces `count` records from the pool, starting at pool index `seq`, and awaits the answer. */
  produce(count: number, seq: number): Promise<void>;
  /** Produces these records as one request and awaits the answer. */
  produceRecords(records: Buffer[]): Promise<void>;
  /** Reads `expected` records from the log's start in requests of about `chunkBytes`. */
  readAll(
    expected: number,
    chunkBytes: number,
    verify: boolean,
    deadline: () => boolean,
  ): Promise<ReadResult>;
  tail(waitMs: number): Promise<Tailer>;
  close(): void;
}

export interface Driver {
  readonly name: string;
  open(): Promise<Handle>;
  /** Empties the log (or creates the stream). */
  reset(): Promise<void>;
  /** Records stored. */
  stored(): Promise<number>;
  close(): void;
}

export interface DriverOptions {
  port: number;
  pool: RecordPool;
  /** Ask for an fsync before the answer where the protocol lets a request ask (booblik FORCED). */
  forced: boolean;
}

// ------------------------------------------------------------------------------------------ booblik

/** Pre-encoded PRODUCE frames for one batch size, a few distinct ones cycled. */
class FrameTemplates {
  private readonly byCount = new Map<number, Buffer[]>();
  constructor(
    private readonly pool: RecordPool,
    private readonly ack: number,
  ) {}
  frame(count: number, seq: number): Buffer {
    let templates = this.byCount.get(count);
    if (!templates) {
      templates = [];
      for (let t = 0; t < 16; t++) {
        templates.push(
          encodeProduceRequest(0, {
            topic: TOPIC,
            partition: 0,
            ack: this.ack as 1,
            records: this.pool.records(t * count, count),
          }),
        );
      }
      this.byCount.set(count, templates);
    }
    const template = templates[Math.floor(seq / count) % templates.length]!;
    // A copy per request: the socket may still hold the previous one when the next is sent.
    const frame = Buffer.allocUnsafe(template.length);
    template.copy(frame);
    return frame;
  }
}

function fetchFrame(fetchOffset: number, maxBytes: number, maxWaitMs: number): Buffer {
  return encodeFetchRequestV2(0, {
    topic: TOPIC,
    partition: 0,
    fetchOffset,
    maxBytes,
    maxWaitMs,
    minBytes: maxWaitMs > 0 ? 1 : 0,
  });
}

/**
 * Walks the stored records of a FETCH body (highWatermark, payloadBytes, records) and returns the whole
 * ones; a record cut at the end is left for the next fetch. With `verify`, every record's CRC-32C is
 * checked and a mismatch throws.
 */
function walkFetchBody(
  body: Buffer,
  verify: boolean,
  fetchOffset: number,
  onRecord?: (payload: Buffer) => void,
): { highWatermark: number; records: number; bytes: number } {
  const highWatermark = Number(body.readBigInt64BE(0));
  const end = body.length;
  let pos = 12;
  let records = 0;
  let bytes = 0;
  while (end - pos >= 8) {
    const size = body.readInt32BE(pos);
    if (size <= 0) throw new Error(`record ${fetchOffset + records}: size ${size}`);
    if (end - pos - 8 < size) break;
    if (verify) {
      const stored = body.readUInt32BE(pos + 4);
      const computed = crc32c(body, pos + 8, pos + 8 + size);
      if (stored !== computed) throw new Error(`record ${fetchOffset + records}: CRC-32C mismatch`);
    }
    onRecord?.(body.subarray(pos + 8, pos + 8 + size));
    records++;
    bytes += size;
    pos += 8 + size;
  }
  return { highWatermark, records, bytes };
}

/**
 * Walks a FETCH body as it arrives, piece by piece: the 12 fixed bytes (highWatermark, payloadBytes),
 * then every whole record; a record split across pieces is carried over (copied, a record at a time).
 * A record cut at the end of the body is not counted: the next fetch asks for it again.
 */
class FetchWalker implements BodyStream {
  records = 0;
  bytes = 0;
  private fixed: Buffer | undefined = Buffer.alloc(0);
  private carry: Buffer | undefined;

  constructor(
    private readonly verify: boolean,
    private readonly fetchOffset: number,
    private readonly limit: number,
  ) {}

  chunk(piece: Buffer): void {
    let pos = 0;
    if (this.fixed !== undefined) {
      const n = Math.min(12 - this.fixed.length, piece.length);
      this.fixed = Buffer.concat([this.fixed, piece.subarray(0, n)]);
      pos = n;
      if (this.fixed.length < 12) return;
      this.fixed = undefined;
    }
    if (this.carry !== undefined) {
      let c = this.carry;
      if (c.length < 8) {
        const n = Math.min(8 - c.length, piece.length - pos);
        c = Buffer.concat([c, piece.subarray(pos, pos + n)]);
        pos += n;
      }
      if (c.length >= 8) {
        const total = 8 + this.checkSize(c.readInt32BE(0));
        const n = Math.min(total - c.length, piece.length - pos);
        c = Buffer.concat([c, piece.subarray(pos, pos + n)]);
        pos += n;
        if (c.length === total) {
          this.take(c, 0, total - 8);
          c = EMPTY;
        }
      }
      this.carry = c.length > 0 ? c : undefined;
      if (this.carry !== undefined) return;
    }
    const end = piece.length;
    while (end - pos >= 8 && this.records < this.limit) {
      const size = this.checkSize(piece.readInt32BE(pos));
      if (end - pos - 8 < size) break;
      this.take(piece, pos, size);
      pos += 8 + size;
    }
    if (pos < end && this.records < this.limit) this.carry = Buffer.from(piece.subarray(pos));
  }

  end(): void {}

  private checkSize(size: number): number {
    if (size <= 0) throw new Error(`record ${this.fetchOffset + this.records}: size ${size}`);
    return size;
  }

  private take(buf: Buffer, pos: number, size: number): void {
    if (this.records >= this.limit) return;
    if (this.verify && buf.readUInt32BE(pos + 4) !== crc32c(buf, pos + 8, pos + 8 + size)) {
      throw new Error(`record ${this.fetchOffset + this.records}: CRC-32C mismatch`);
    }
    this.records++;
    this.bytes += size;
  }
}

const EMPTY = Buffer.alloc(0);

async function booblikReadAll(
  send: (offset: number, maxBytes: number, limit: number) => Promise<{ records: number; bytes: number }>,
  expected: number,
  chunkBytes: number,
  deadline: () => boolean,
): Promise<ReadResult> {
  let offset = 0;
  let bytes = 0;
  while (offset < expected && !deadline()) {
    const got = await send(offset, chunkBytes, expected - offset);
    if (got.records === 0) break;
    offset += got.records;
    bytes += got.bytes;
  }
  return { records: offset, bytes };
}

export function booblikDriver(o: DriverOptions): Driver {
  const ack = o.forced ? AckPolicy.FORCED : AckPolicy.WRITTEN;
  const templates = new FrameTemplates(o.pool, ack);
  let admin: BooblikWire | undefined;
  const wire = async () => {
    admin ??= await BooblikWire.connect(o.port);
    return admin;
  };
  return {
    name: 'booblik',
    async open(): Promise<Handle> {
      const w = await BooblikWire.connect(o.port);
      return {
        produce: (count, seq) => w.send(templates.frame(count, seq)).then(() => undefined),
        produceRecords: (records) =>
          w.send(encodeProduceRequest(0, { topic: TOPIC, partition: 0, ack, records })).then(() => undefined),
        readAll: (expected, chunkBytes, verify, deadline) =>
          booblikReadAll(
            async (offset, maxBytes, limit) => {
              const walker = new FetchWalker(verify, offset, limit);
              await w.send(fetchFrame(offset, maxBytes, 0), walker);
              return walker;
            },
            expected,
            chunkBytes,
            deadline,
          ),
        async tail(waitMs) {
          const probe = walkFetchBody(await w.send(fetchFrame(0, 1, 0)), false, 0);
          let offset = probe.highWatermark;
          return {
            async next() {
              const out: Buffer[] = [];
              const body = await w.send(fetchFrame(offset, 65536, Math.min(waitMs, fetchWaitMsMax)));
              offset += walkFetchBody(body, true, offset, (p) => out.push(p)).records;
              return out;
            },
          };
        },
        close: () => w.close(),
      };
    },
    async reset() {
      // A fresh broker and data directory per workload: nothing to empty.
    },
    async stored() {
      return walkFetchBody(await (await wire()).send(fetchFrame(0, 1, 0)), false, 0).highWatermark;
    },
    close: () => admin?.close(),
  };
}

/** The same operations through the full TypeScript client, to show what it costs. */
export function booblikClientDriver(o: DriverOptions): Driver {
  const ack = o.forced ? AckPolicy.FORCED : AckPolicy.WRITTEN;
  const address = `127.0.0.1:${o.port}`;
  let admin: Connection | undefined;
  return {
    name: 'booblik-client',
    async open(): Promise<Handle> {
      const c = await Connection.connect(address);
      return {
        produce: (count, seq) =>
          c.produce(TOPIC, 0, o.pool.records(seq, count), { ack }).then(() => undefined),
        produceRecords: (records) => c.produce(TOPIC, 0, records, { ack }).then(() => undefined),
        // Through the Consumer's async iterator, as an application reads: one record at a time, every
        // CRC-32C verified (the client has no unverified path to measure).
        async readAll(expected, chunkBytes, _verify, deadline) {
          const consumer = c.consumer(TOPIC, 0, 0, { maxBytes: chunkBytes, maxWaitMs: 0 });
          let records = 0;
          let bytes = 0;
          for await (const record of consumer) {
            bytes += record.payload.length;
            if (++records >= expected || (records % 4096 === 0 && deadline())) break;
          }
          await consumer.close();
          return { records, bytes };
        },
        async tail(waitMs) {
          let offset = (await c.metadata(TOPIC))[0]!.partitions[0]!.highWatermark;
          return {
            async next() {
              const r = await c.fetch({
                topic: TOPIC,
                partition: 0,
                offset,
                maxBytes: 65536,
                maxWaitMs: waitMs,
              });
              offset = r.nextOffset;
              return r.records.map((x) => x.payload);
            },
          };
        },
        close: () => c.destroy(),
      };
    },
    async reset() {},
    async stored() {
      admin ??= await Connection.connect(address);
      return (await admin.metadata(TOPIC))[0]!.partitions[0]!.highWatermark;
    },
    close: () => admin?.destroy(),
  };
}

// ------------------------------------------------------------------------------------------ redis

export function redisDriver(o: DriverOptions): Driver {
  // XADD <key> * d <record>: a pipeline of k commands is pre-encoded once and reused as it is.
  const pipelines = new Map<number, Buffer[]>();
  const pipeline = (count: number, seq: number): Buffer => {
    let p = pipelines.get(count);
    if (!p) {
      p = [];
      for (let t = 0; t < 16; t++) {
        const parts: Buffer[] = [];
        for (const r of o.pool.records(t * count, count))
          RespClient.encode(['XADD', REDIS_KEY, '*', 'd', r], parts);
        p.push(Buffer.concat(parts));
      }
      pipelines.set(count, p);
    }
    return p[Math.floor(seq / count) % p.length]!;
  };
  let admin: RespClient | undefined;
  const adminClient = async () => {
    admin ??= await RespClient.connect(o.port);
    return admin;
  };
  return {
    name: 'redis',
    async open(): Promise<Handle> {
      const r = await RespClient.connect(o.port);
      return {
        produce: (count, seq) => r.sendRaw(pipeline(count, seq), count).then(() => undefined),
        produceRecords: (records) => {
          const parts: Buffer[] = [];
          for (const rec of records) RespClient.encode(['XADD', REDIS_KEY, '*', 'd', rec], parts);
          return r.sendRaw(Buffer.concat(parts), records.length).then(() => undefined);
        },
        async readAll(expected, chunkBytes, _verify, deadline) {
          // XRANGE in chunks of about chunkBytes of payload, each starting after the last id seen.
          const chunk = Math.max(1, Math.floor(chunkBytes / o.pool.recordBytes));
          let start = '-';
          let records = 0;
          let bytes = 0;
          while (records < expected && !deadline()) {
            const res = (await r.cmd(
              'XRANGE',
              REDIS_KEY,
              start,
              '+',
              'COUNT',
              Math.min(chunk, expected - records),
            )) as RespValue[][];
            if (res.length === 0) break;
            for (const e of res) bytes += ((e[1] as Buffer[])[1] as Buffer).length;
            records += res.length;
            start = `(${(res[res.length - 1]![0] as Buffer).toString('latin1')}`;
          }
          return { records, bytes };
        },
        async tail(waitMs) {
          let last = '$';
          return {
            async next() {
              const res = (await r.cmd('XREAD', 'COUNT', 100, 'BLOCK', waitMs, 'STREAMS', REDIS_KEY, last)) as
                | RespValue[][]
                | null;
              const out: Buffer[] = [];
              if (!res) return out;
              const entries = res[0]![1] as RespValue[][];
              for (const e of entries) out.push((e[1] as Buffer[])[1]!);
              if (entries.length > 0) last = (entries[entries.length - 1]![0] as Buffer).toString('latin1');
              return out;
            },
          };
        },
        close: () => r.close(),
      };
    },
    async reset() {
      await (await adminClient()).cmd('DEL', REDIS_KEY);
    },
    async stored() {
      return Number(await (await adminClient()).cmd('XLEN', REDIS_KEY));
    },
    close: () => admin?.close(),
  };
}

// ------------------------------------------------------------------------------------------ nats

export function natsDriver(o: DriverOptions): Driver {
  let admin: NatsClient | undefined;
  const adminClient = async () => {
    admin ??= await NatsClient.connect(o.port);
    return admin;
  };
  const consumer = async (n: NatsClient, deliver: 'all' | 'new') =>
    String(
      (
        await n.request(`$JS.API.CONSUMER.CREATE.${NATS_STREAM}`, {
          stream_name: NATS_STREAM,
          config: {
            ack_policy: 'none',
            deliver_policy: deliver,
            replay_policy: 'instant',
            inactive_threshold: 60e9,
          },
        })
      ).name,
    );
  return {
    name: 'nats',
    async open(): Promise<Handle> {
      const n = await NatsClient.connect(o.port);
      return {
        produce: (count, seq) =>
          n.publishBatch(NATS_SUBJECT, o.pool.records(seq, count)).then(() => undefined),
        produceRecords: (records) => n.publishBatch(NATS_SUBJECT, records).then(() => undefined),
        async readAll(expected, chunkBytes, _verify, deadline) {
          const name = await consumer(n, 'all');
          const chunk = Math.max(1, Math.floor(chunkBytes / o.pool.recordBytes));
          let records = 0;
          let bytes = 0;
          while (records < expected && !deadline()) {
            const f = await n.pullNext(NATS_STREAM, name, Math.min(chunk, expected - records), 5000);
            records += f.messages;
            bytes += f.bytes;
            if (f.status && f.messages === 0) break;
          }
          await n.request(`$JS.API.CONSUMER.DELETE.${NATS_STREAM}.${name}`).catch(() => undefined);
          return { records, bytes };
        },
        async tail(waitMs) {
          const name = await consumer(n, 'new');
          return {
            async next() {
              const out: Buffer[] = [];
              // The message is a view into the client's buffer: copy the few bytes kept.
              await n.pullNext(NATS_STREAM, name, 1, waitMs, (d) => out.push(Buffer.from(d)));
              return out;
            },
          };
        },
        close: () => n.close(),
      };
    },
    async reset() {
      const a = await adminClient();
      await a.request(`$JS.API.STREAM.DELETE.${NATS_STREAM}`).catch(() => undefined);
      await a.request(`$JS.API.STREAM.CREATE.${NATS_STREAM}`, {
        name: NATS_STREAM,
        subjects: ['bench.>'],
        storage: 'file',
        num_replicas: 1,
        retention: 'limits',
        discard: 'old',
        max_msgs: -1,
        max_bytes: -1,
        max_age: 0,
        max_msg_size: -1,
        max_consumers: -1,
      });
    },
    async stored() {
      const info = await (await adminClient()).request(`$JS.API.STREAM.INFO.${NATS_STREAM}`);
      return Number((info.state as { messages: number }).messages);
    },
    close: () => admin?.close(),
  };
}

/** `node-floor`: the least a Node server does to serve these workloads on booblik's wire (node-floor.ts). */
export type SystemName = 'booblik' | 'booblik-client' | 'redis' | 'nats' | 'node-floor';

export function makeDriver(system: SystemName, o: DriverOptions): Driver {
  switch (system) {
    case 'booblik':
    case 'node-floor':
      return booblikDriver(o);
    case 'booblik-client':
      return booblikClientDriver(o);
    case 'redis':
      return redisDriver(o);
    case 'nats':
      return natsDriver(o);
  }
}
