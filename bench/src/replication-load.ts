/** The replication bench's loads, each straight to a partition's primary over the bench's own wire. */
import { AckPolicy, type AckPolicyValue, encodeProduceRequest } from '@booblik/protocol';
import { check, option, Wire, within } from './cluster-harness.js';
import { quantile } from './stats.js';

export const RECORD_BYTES = 128;
/** Concurrent FORCED producers (`--forced-producers=N`): 8 by default, 64 for the many-producer case. */
export const FORCED_PRODUCERS = Number(option('forced-producers') ?? 8);
const REQUEST_TIMEOUT_MS = 2000;

export const produceFrame = (topic: string, ack: AckPolicyValue, record: Buffer) =>
  encodeProduceRequest(0, { topic, partition: 0, ack, records: [record] });

/** FORCED_PRODUCERS connections, each with one FORCED record in flight, for `seconds`: records/s. */
export async function forced(address: string, topic: string, seconds: number): Promise<number> {
  const frame = produceFrame(topic, AckPolicy.FORCED, Buffer.alloc(RECORD_BYTES, 7));
  const wires = await Promise.all(Array.from({ length: FORCED_PRODUCERS }, () => Wire.connect(address)));
  try {
    // Warmed up: connections open, the produce path compiled.
    await Promise.all(
      wires.map(async (w) => {
        for (let i = 0; i < 25; i++) check(await w.request(Buffer.from(frame)), 'PRODUCE');
      }),
    );
    let acked = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
    await Promise.all(
      wires.map(async (w) => {
        while (performance.now() < end) {
          check(await w.request(Buffer.from(frame)), 'PRODUCE');
          acked++;
        }
      }),
    );
    return acked / ((performance.now() - start) / 1000);
  } finally {
    for (const w of wires) w.close();
  }
}

/** Ack latency (ms) of one WRITTEN record at a time over `requests` requests, after a warm-up. */
export async function ackLatency(
  address: string,
  topic: string,
  requests: number,
): Promise<{ p50: number; p99: number }> {
  const frame = produceFrame(topic, AckPolicy.WRITTEN, Buffer.alloc(RECORD_BYTES, 3));
  const wire = await Wire.connect(address);
  try {
    for (let i = 0; i < 500; i++) check(await wire.request(Buffer.from(frame)), 'PRODUCE');
    const times: number[] = [];
    for (let i = 0; i < requests; i++) {
      const t = performance.now();
      check(await wire.request(Buffer.from(frame)), 'PRODUCE');
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
  } finally {
    wire.close();
  }
}

/** One WRITTEN record to `address`, with a deadline: whether it was acknowledged. */
export async function produceOnce(address: string, topic: string): Promise<boolean> {
  let wire: Wire | undefined;
  try {
    wire = await within(Wire.connect(address), REQUEST_TIMEOUT_MS, 'connect');
    const frame = produceFrame(topic, AckPolicy.WRITTEN, Buffer.alloc(RECORD_BYTES, 5));
    check(await within(wire.request(frame), REQUEST_TIMEOUT_MS, 'PRODUCE'), 'PRODUCE');
    return true;
  } catch {
    return false;
  } finally {
    wire?.close();
  }
}
