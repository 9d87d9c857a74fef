/**
 * The consumer's cost per record must not grow with the records one fetch returns: the 1 MiB default
 * holds ~7,700 records of 128 bytes, and a consumer that moved the rest of the batch for every record
 * handed out (Array.shift) took 9.4 s for 300 k records instead of 0.3 s.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Connection, FetchOptions, FetchResult } from './connection.js';
import { Consumer } from './consumer.js';

const PAYLOAD = Buffer.alloc(16, 1);

/** A connection stand-in that answers every fetch at once with `perFetch` records, in a frozen array. */
function connectionServing(perFetch: number): Connection {
  const stub = {
    options: {},
    state: 'open',
    async fetch(request: FetchOptions): Promise<FetchResult> {
      // Frozen: a consumer that takes records out of the batch in place throws instead of slowing down.
      const records = Object.freeze(
        Array.from({ length: perFetch }, (_, i) => ({ offset: request.offset + i, payload: PAYLOAD })),
      );
      return {
        highWatermark: request.offset + perFetch,
        fetchOffset: request.offset,
        records: records as FetchResult['records'],
        count: perFetch,
        payloadAt: (i) => records[i]!.payload,
        nextOffset: request.offset + perFetch,
        truncatedBytes: 0,
        truncatedRecordBytes: -1,
        recordExceedsMaxBytes: false,
        epoch: -1,
      };
    },
    speaksFetchEpochs: async () => false,
    redial: () => Promise.reject(new Error('the stand-in never loses its connection')),
  };
  return stub as unknown as Connection;
}

async function consume(perFetch: number, total: number): Promise<number> {
  const consumer = new Consumer(connectionServing(perFetch), 't', 0, 0, { maxWaitMs: 0 });
  let expected = 0;
  const t0 = performance.now();
  for await (const record of consumer) {
    assert.equal(record.offset, expected);
    if (++expected === total) break;
  }
  const ms = performance.now() - t0;
  assert.equal(consumer.position, total);
  await consumer.close();
  return ms;
}

describe('consumer cost per record', () => {
  it('does not grow with the records per fetch (60x more per fetch costs at most 3x per record)', async () => {
    const total = 60_000;
    const small = 500;
    const large = 30_000;
    await consume(small, total); // JIT warm-up
    await consume(large, total);
    // The fastest of a few runs each, interleaved, so a busy moment on a shared machine weighs on neither.
    let smallMs = Number.POSITIVE_INFINITY;
    let largeMs = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 3; run++) {
      smallMs = Math.min(smallMs, await consume(small, total));
      largeMs = Math.min(largeMs, await consume(large, total));
    }
    assert.ok(
      largeMs <= 3 * smallMs + 5,
      `${total} records: ${largeMs.toFixed(1)} ms at ${large} per fetch, ${smallMs.toFixed(1)} ms at ${small}`,
    );
  });

  it('allocates per record no more than an async iterator of records must (a promise, a result, a record, a view)', async () => {
    // Bytes, not time: the same on any machine. An array entry, a closure or a second promise per
    // record shows up as 8 bytes or more; what each fetch allocates is spread over 7,700 records.
    const script = fileURLToPath(new URL('./test-support/record-allocation.js', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    const measured = JSON.parse(stdout) as { consumerBytesPerRecord: number; leastBytesPerRecord: number };
    const { consumerBytesPerRecord: consumer, leastBytesPerRecord: least } = measured;
    assert.ok(
      consumer <= least + 4,
      `${consumer.toFixed(1)} bytes a record through the consumer, ${least.toFixed(1)} at the least`,
    );
  });
});
