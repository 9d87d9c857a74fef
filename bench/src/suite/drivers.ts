/**
 * One driver per system, each through its lean wire client: the same operations (produce k records and
 * await the answer, read the log from its start, tail it with a long poll) so that a workload is
 * written once and runs against every system alike.
 */
import fs from 'node:fs';
import { Connection } from '@booblik/client';
import {
  AckPolicy,
  crc32c,
  encodeFetchRequestV2,
  encodeProduceRequest,
  fetchWaitMsMax,
} from '@booblik/protocol';
import {
  type Driver,
  type DriverOptions,
  type Handle,
  type ReadResult,
  type RecordPool,
  TOPIC,
} from './driver.js';
import { natsDriver, redisDriver } from './peer-drivers.js';
import { type BodyStream, BooblikWire } from './wire/booblik.js';

export {
  type Driver,
  type DriverOptions,
  type Handle,
  type ReadResult,
  RecordPool,
  type Tailer,
  TOPIC,
} from './driver.js';

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

/** The lean driver; over TLS (booblik-tls) when `o.tlsCaFile` names the CA to trust. */
export function booblikDriver(o: DriverOptions): Driver {
  const ack = o.forced ? AckPolicy.FORCED : AckPolicy.WRITTEN;
  const templates = new FrameTemplates(o.pool, ack);
  const ca = o.tlsCaFile === undefined ? undefined : fs.readFileSync(o.tlsCaFile);
  const connect = () => BooblikWire.connect(o.port, ca);
  let admin: BooblikWire | undefined;
  const wire = async () => {
    admin ??= await connect();
    return admin;
  };
  return {
    name: ca ? 'booblik-tls' : 'booblik',
    async open(): Promise<Handle> {
      const w = await connect();
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

export type SystemName =
  | 'booblik'
  | 'booblik-tls'
  | 'booblik-client'
  | 'redis'
  | 'nats'
  | 'node-floor'
  | 'node-floor-tls';

export function makeDriver(system: SystemName, o: DriverOptions): Driver {
  switch (system) {
    case 'booblik':
    case 'node-floor':
      return booblikDriver({ ...o, tlsCaFile: undefined });
    case 'booblik-tls':
    case 'node-floor-tls':
      if (o.tlsCaFile === undefined) throw new Error(`${system}: no CA file (tlsCaFile) to trust`);
      return booblikDriver(o);
    case 'booblik-client':
      return booblikClientDriver(o);
    case 'redis':
      return redisDriver(o);
    case 'nats':
      return natsDriver(o);
  }
}
