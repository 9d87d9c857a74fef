/**
 * Run as a script (`node record-allocation.js`): prints, as JSON, the JS heap bytes allocated per
 * record read through the Consumer's async iterator and through the least iterator the same records
 * could be handed out by (per record a promise, a result, a record and a view). A process of its own:
 * under the test runner every promise carries the runner's async context, and the figures wander.
 */
import v8 from 'node:v8';
import { crc32c, indexFetchPayload, recordHeaderBytes } from '@booblik/protocol';
import type { Connection, FetchOptions, FetchResult } from '../connection.js';
import { Consumer } from '../consumer.js';
import { DecodedFetch } from '../fetch-result.js';

type Records = AsyncIterable<{ payload: Buffer }>;

const RECORDS_PER_FETCH = 7_700; // the 1 MiB default holds about this many 128-byte records
const RECORD_BYTES = 128;
const RECORDS_MEASURED = 200_000;

/** `count` stored records (size, CRC-32C, payload) of `bytes` each: a FETCH payload. */
function storedRecords(count: number, bytes: number): Buffer {
  const payload = Buffer.alloc(count * (recordHeaderBytes + bytes));
  for (let i = 0, at = 0; i < count; i++, at += recordHeaderBytes + bytes) {
    const start = at + recordHeaderBytes;
    payload.fill(i % 251, start, start + bytes);
    payload.writeInt32BE(bytes, at);
    payload.writeUInt32BE(crc32c(payload, start, start + bytes), at + 4);
  }
  return payload;
}

/** A connection stand-in that answers every fetch with the same payload, decoded as a real answer is. */
function connectionAnswering(payload: Buffer): Connection {
  const stub = {
    options: {},
    state: 'open',
    async fetch(request: FetchOptions): Promise<FetchResult> {
      const index = indexFetchPayload(payload, { fetchOffset: request.offset, maxBytes: request.maxBytes });
      return new DecodedFetch(Number.MAX_SAFE_INTEGER, request.offset, payload, index, 0);
    },
    speaksFetchEpochs: async () => true,
    redial: () => Promise.reject(new Error('the stand-in never loses its connection')),
  };
  return stub as unknown as Connection;
}

/** The same records handed out with nothing but what an async iterator of them cannot do without. */
function leastIterator(payload: Buffer): Records {
  const stride = recordHeaderBytes + RECORD_BYTES;
  let offset = 0;
  const iterator: AsyncIterableIterator<{
    topic: string;
    partition: number;
    offset: number;
    payload: Buffer;
  }> = {
    next: () => {
      const at = payload.byteOffset + (offset % RECORDS_PER_FETCH) * stride + recordHeaderBytes;
      const view = Buffer.from(payload.buffer, at, RECORD_BYTES);
      return Promise.resolve({
        done: false,
        value: { topic: 't', partition: 0, offset: offset++, payload: view },
      });
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

async function read(records: Records, total: number): Promise<void> {
  let count = 0;
  let bytes = 0;
  for await (const record of records) {
    bytes += record.payload.length;
    if (++count === total) break;
  }
  if (bytes !== total * RECORD_BYTES)
    throw new Error(`read ${bytes} bytes, expected ${total * RECORD_BYTES}`);
}

/** JS heap bytes allocated while reading: what the heap grew by, plus what each collection freed. */
async function bytesPerRecord(records: Records, total: number): Promise<number> {
  const profiler = new v8.GCProfiler();
  profiler.start();
  const before = v8.getHeapStatistics().used_heap_size;
  await read(records, total);
  const after = v8.getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const gc of profiler.stop().statistics) {
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  }
  return (after - before + freed) / total;
}

async function measure(): Promise<{ consumerBytesPerRecord: number; leastBytesPerRecord: number }> {
  const payload = storedRecords(RECORDS_PER_FETCH, RECORD_BYTES);
  const consumer = () => new Consumer(connectionAnswering(payload), 't', 0, 0, { maxWaitMs: 0 });
  const least = () => leastIterator(payload);
  // Warm-up: the figures are those of optimized code, as in a long-running reader.
  await read(consumer(), RECORDS_MEASURED);
  await read(least(), RECORDS_MEASURED);
  let consumerBytesPerRecord = Number.POSITIVE_INFINITY;
  let leastBytesPerRecord = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 2; run++) {
    consumerBytesPerRecord = Math.min(
      consumerBytesPerRecord,
      await bytesPerRecord(consumer(), RECORDS_MEASURED),
    );
    leastBytesPerRecord = Math.min(leastBytesPerRecord, await bytesPerRecord(least(), RECORDS_MEASURED));
  }
  return { consumerBytesPerRecord, leastBytesPerRecord };
}

process.stdout.write(`${JSON.stringify(await measure())}\n`);
