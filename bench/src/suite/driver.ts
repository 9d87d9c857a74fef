/** What every driver is: the operations a workload runs, the same against every system (drivers.ts). */
import crypto from 'node:crypto';

export const TOPIC = 'bench';

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
  /** Connect with TLS, trusting the CA in this PEM file (booblik-tls). */
  tlsCaFile?: string;
}
