import { type AckPolicyValue, OFFSET_UNKNOWN, ProtocolError, partitionForKey } from '@booblik/protocol';
import { checkPayload } from './checks.js';
import type { Connection } from './connection.js';

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
 * A topic as METADATA described it when the handle was made: its partition ids, the partitioner,
 * and a send() that routes one record and waits for its answer. The partition list is not
 * refreshed; make a new handle to see partitions added later.
 */
export class Topic {
  /** Turned on every call with a null key (the spec's round robin), so asking twice moves twice. */
  private roundRobin = 0;

  constructor(
    private readonly connection: Connection,
    readonly name: string,
    /** Partition ids, sorted: the partitioner's index points into this list. */
    readonly partitions: readonly number[],
  ) {
    if (partitions.length === 0) throw new ProtocolError(`topic ${name}: METADATA lists no partitions`);
  }

  static async load(connection: Connection, name: string): Promise<Topic> {
    const topics = await connection.metadata(name);
    const found = topics.find((t) => t.name === name);
    // The broker refuses an unknown topic; an answer without the topic asked for is the broker's bug.
    if (!found) throw new ProtocolError(`METADATA ${name}: the answer does not list the topic asked for`);
    const ids = found.partitions.map((p) => p.partition).sort((a, b) => a - b);
    return new Topic(connection, name, ids);
  }

  /** The partition for a key (FNV-1a over its bytes), or the next in turn for a null key. */
  partitionFor(key?: Bytes | null): number {
    const count = this.partitions.length;
    if (key === undefined || key === null) {
      const index = this.roundRobin % count;
      this.roundRobin = (this.roundRobin + 1) % count;
      return this.partitions[index]!;
    }
    return this.partitions[partitionForKey(toBytes(key), count)]!;
  }

  /** Sends one record to the partition its key picks and waits for the answer (one request per call). */
  async send(payload: Bytes, options: TopicSendOptions = {}): Promise<Sent> {
    const bytes = checkPayload(`payload of a record for ${this.name}`, toBytes(payload));
    const partition = this.partitionFor(options.key);
    const result = await this.connection.produce(this.name, partition, [bytes], {
      ack: options.ack,
    });
    return { partition, offset: result?.baseOffset ?? OFFSET_UNKNOWN };
  }
}
