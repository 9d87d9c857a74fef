import { type AckPolicyValue, OFFSET_UNKNOWN, ProtocolError, partitionForKey } from '@booblik/protocol';
import { checkPayload } from './checks.js';
import { type Clock, systemClock } from './clock.js';
import type { TopicSource } from './sources.js';

/**
 * How old a topic's partition list may get before it is read again: partitions added at runtime
 * are routed to within this long. Five seconds, like a Kafka client's metadata age: one small
 * METADATA per topic every few seconds of sending.
 */
export const DEFAULT_METADATA_MAX_AGE_MS = 5_000;

export interface TopicOptions {
  /** Partitions are read again once the list is this old (default 5 s; 0: before every send). */
  metadataMaxAgeMs?: number;
  clock?: Clock;
}

/** A key or payload: bytes as given, or a string sent as UTF-8. */
export type Bytes = Uint8Array | string;

export interface TopicSendOptions {
  /** Records with one key land in one partition; no key takes the next partition in turn. */
  key?: Bytes | null;
  /** Default WRITTEN; under NONE the offset is OFFSET_UNKNOWN (-1). */
  ack?: AckPolicyValue;
}

export interface Sent {
  partition: number;
  /** The record's offset, or OFFSET_UNKNOWN (-1) under ack NONE. */
  offset: number;
}

export function toBytes(value: Bytes): Uint8Array {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

/**
 * A topic as METADATA describes it: its partition ids, the partitioner, and a send() that routes one
 * record and waits for its answer. The partition list is read again once it is older than
 * `metadataMaxAgeMs`, so partitions added at runtime get records (send() waits for that read;
 * partitionFor() starts it and routes with the list it has).
 */
export class Topic {
  /** Turned on every call with a null key (the spec's round robin), so asking twice moves twice. */
  private roundRobin = 0;
  private ids: readonly number[];
  private loadedAt: number;
  private refreshing: Promise<void> | null = null;
  private readonly clock: Clock;
  private readonly maxAgeMs: number;

  constructor(
    private readonly connection: TopicSource,
    readonly name: string,
    /** Partition ids, sorted: the partitioner's index points into this list. */
    partitions: readonly number[],
    options: TopicOptions = {},
  ) {
    if (partitions.length === 0) throw new ProtocolError(`topic ${name}: METADATA lists no partitions`);
    this.ids = partitions;
    this.clock = options.clock ?? systemClock;
    this.maxAgeMs = options.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS;
    this.loadedAt = this.clock.now();
  }

  static async load(connection: TopicSource, name: string, options: TopicOptions = {}): Promise<Topic> {
    return new Topic(connection, name, await readPartitions(connection, name), options);
  }

  /** Partition ids, sorted, as last read. */
  get partitions(): readonly number[] {
    return this.ids;
  }

  /** Reads the partition list again now (one METADATA; concurrent callers share it). */
  refresh(): Promise<void> {
    this.refreshing ??= readPartitions(this.connection, this.name)
      .then((ids) => {
        this.ids = ids;
        this.loadedAt = this.clock.now();
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private get stale(): boolean {
    return this.clock.now() - this.loadedAt >= this.maxAgeMs;
  }

  /**
   * The partition for a key (FNV-1a over its bytes), or the next in turn for a null key. A stale
   * list is read again in the background; this call routes with the list as it is.
   */
  partitionFor(key?: Bytes | null): number {
    // A failed read leaves the list as it was; the next call tries again.
    if (this.stale && this.refreshing === null && this.connection !== undefined)
      void this.refresh().catch(() => {});
    const count = this.ids.length;
    if (key === undefined || key === null) {
      const index = this.roundRobin % count;
      this.roundRobin = (this.roundRobin + 1) % count;
      return this.ids[index]!;
    }
    return this.ids[partitionForKey(toBytes(key), count)]!;
  }

  /** Sends one record to the partition its key picks and waits for the answer (one request per call). */
  async send(payload: Bytes, options: TopicSendOptions = {}): Promise<Sent> {
    const bytes = checkPayload(`payload of a record for ${this.name}`, toBytes(payload));
    if (this.stale) await this.refresh();
    const partition = this.partitionFor(options.key);
    const result = await this.connection.produce(this.name, partition, [bytes], {
      ack: options.ack,
    });
    return { partition, offset: result?.baseOffset ?? OFFSET_UNKNOWN };
  }
}

async function readPartitions(connection: TopicSource, name: string): Promise<number[]> {
  const topics = await connection.metadata(name);
  const found = topics.find((t) => t.name === name);
  // The broker refuses an unknown topic; an answer without the topic asked for is the broker's bug.
  if (!found) throw new ProtocolError(`METADATA ${name}: the answer does not list the topic asked for`);
  if (found.partitions.length === 0) throw new ProtocolError(`topic ${name}: METADATA lists no partitions`);
  return found.partitions.map((p) => p.partition).sort((a, b) => a - b);
}
