/**
 * A broker's behaviour in memory, as a FakeBroker handler: PRODUCE appends, FETCH reads stored
 * records cut at maxBytes (holding a long fetch until a write or the end of its wait), METADATA lists
 * partitions. Enough of the spec for client and CLI tests; the real broker is tested on its own.
 */
import {
  AckPolicy,
  ApiKey,
  ErrorCode,
  encodeErrorResponse,
  encodeFetchResponseHeader,
  encodeMetadataResponse,
  encodeProduceResponse,
  encodeStoredRecords,
  fetchWaitMsMax,
  produceRecordPayloads,
  type TopicMetadata,
} from '@booblik/protocol';
import type { FakeHandler, ReceivedRequest } from './fake-broker.js';

interface Partition {
  records: Buffer[];
  /** Held long fetches, woken by the next append. */
  waiters: (() => void)[];
}

export class MemoryLog {
  private readonly topics = new Map<string, Partition[]>();

  /** Topics and their partition counts, e.g. `{ orders: 3 }`. */
  constructor(topics: Record<string, number>) {
    for (const [name, count] of Object.entries(topics)) {
      this.topics.set(
        name,
        Array.from({ length: count }, () => ({ records: [], waiters: [] })),
      );
    }
  }

  /** Appends records as a PRODUCE would; returns the base offset. */
  append(topic: string, partition: number, payloads: readonly Uint8Array[]): number {
    const p = this.partition(topic, partition);
    if (!p) throw new Error(`MemoryLog: no partition ${topic}/${partition}`);
    const base = p.records.length;
    for (const payload of payloads) p.records.push(Buffer.from(payload));
    for (const wake of p.waiters.splice(0)) wake();
    return base;
  }

  /** The records of one partition, in offset order. */
  records(topic: string, partition: number): Buffer[] {
    return this.partition(topic, partition)?.records ?? [];
  }

  readonly handle: FakeHandler = (req) => this.answer(req);

  private partition(topic: string, partition: number): Partition | undefined {
    return this.topics.get(topic)?.[partition];
  }

  private async answer({ request }: ReceivedRequest): Promise<Buffer | null> {
    const id = request.correlationId;
    switch (request.apiKey) {
      case ApiKey.METADATA: {
        const names =
          request.body.topics.length > 0 ? [...new Set(request.body.topics)] : [...this.topics.keys()];
        const out: TopicMetadata[] = [];
        for (const name of names.sort()) {
          const partitions = this.topics.get(name);
          if (!partitions) return encodeErrorResponse(id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          out.push({
            name,
            partitions: partitions.map((p, i) => ({
              partition: i,
              logStartOffset: 0,
              highWatermark: p.records.length,
            })),
          });
        }
        return encodeMetadataResponse(id, out);
      }
      case ApiKey.PRODUCE: {
        const { topic, partition, ack } = request.body;
        const p = this.partition(topic, partition);
        const none = ack === AckPolicy.NONE;
        if (!p) return none ? null : encodeErrorResponse(id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        const baseOffset = this.append(topic, partition, produceRecordPayloads(request.body));
        return none ? null : encodeProduceResponse(id, { baseOffset, logEndOffset: p.records.length });
      }
      case ApiKey.FETCH: {
        const { topic, partition, fetchOffset, maxBytes, maxWaitMs } = request.body;
        const p = this.partition(topic, partition);
        if (!p) return encodeErrorResponse(id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        if (maxWaitMs > 0 && fetchOffset >= p.records.length) {
          await new Promise<void>((resolve) => {
            // unref: a wait still held when a test ends must not keep the process alive.
            const timer = setTimeout(resolve, Math.min(maxWaitMs, fetchWaitMsMax)).unref();
            p.waiters.push(() => {
              clearTimeout(timer);
              resolve();
            });
          });
        }
        if (fetchOffset > p.records.length) return encodeErrorResponse(id, ErrorCode.OFFSET_OUT_OF_RANGE);
        const stored = encodeStoredRecords(p.records.slice(fetchOffset));
        const payload = stored.subarray(0, Math.min(stored.length, maxBytes));
        return Buffer.concat([encodeFetchResponseHeader(id, p.records.length, payload.length), payload]);
      }
      default:
        // The topic APIs are tested against the real broker.
        return encodeErrorResponse(id, ErrorCode.UNSUPPORTED_VERSION);
    }
  }
}
