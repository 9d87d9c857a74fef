/** The peers' drivers, Redis Streams and NATS JetStream, each through its lean wire client. */
import type { Driver, DriverOptions, Handle } from './driver.js';
import { NatsClient } from './wire/nats.js';
import { RespClient, type RespValue } from './wire/resp.js';

const REDIS_KEY = 'bench';
const NATS_STREAM = 'BENCH';
const NATS_SUBJECT = 'bench.a';

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
