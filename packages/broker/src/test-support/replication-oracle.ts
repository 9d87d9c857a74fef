/**
 * The judge of the replication fault tests: producers that record what was acknowledged (offset and
 * bytes), consumers that record every record and high watermark they were shown, and the checks a
 * user of a replicated broker relies on. Raw frames, so the test judges the broker, not a client.
 */
import assert from 'node:assert/strict';
import {
  AckPolicy,
  decodeProduceResponse,
  ErrorCode,
  encodeFetchRequestV2,
  encodeFetchRequestV4,
  encodeProduceRequest,
} from '@booblik/protocol';
import { connect, metadata } from './cluster-wire.js';
import { fetched, type RawClient } from './raw-client.js';

export interface Acknowledged {
  offset: number;
  payload: string;
  ack: 'WRITTEN' | 'FORCED';
  /** performance.now() when it was sent, and when its acknowledgement arrived. */
  sentAt: number;
  at: number;
  /** The broker that acknowledged it (`127.0.0.1:<port>`). */
  via: string;
}

/** A seeded choice (mulberry32): the same seed, the same run of choices. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Per-request deadline: a primary cut off or stopped must not hold a producer forever. */
const REQUEST_TIMEOUT_MS = 3000;

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class ReplicationOracle {
  readonly acknowledged: Acknowledged[] = [];
  /** offset -> the record a reader was shown there. */
  readonly seen = new Map<number, string>();
  readonly refusals = new Map<string, number>();
  /** Payloads a broker refused (any code but OUTCOME_UNKNOWN): none may be in the final log. */
  readonly refused = new Map<string, number>();
  /** Payloads whose outcome was not known (OUTCOME_UNKNOWN, a lost answer): either is right. */
  readonly unknown = new Set<string>();
  private stopping = false;
  private readonly running: Promise<void>[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    /** Addresses of the brokers that are up now (producers and consumers ask any of them). */
    private readonly addresses: () => string[],
    private readonly random: () => number,
  ) {}

  /** `count` producers, each sending one record at a time, WRITTEN or FORCED by the seed. */
  startProducers(count: number): void {
    for (let i = 0; i < count; i++) this.running.push(this.produceLoop(i));
  }

  /** A consumer reading from the primary (through any broker), checking what it is shown. */
  startConsumer(name: string): void {
    this.running.push(this.consumeLoop(name));
  }

  /** performance.now() of each FETCH a consumer had answered without an error, by consumer. */
  readonly readsAnswered = new Map<string, number[]>();

  /** The longest time `name` went without an answered FETCH between `from` and `to` (performance.now()). */
  longestReadGap(name: string, from: number, to: number): number {
    let last = from;
    let longest = 0;
    for (const at of this.readsAnswered.get(name) ?? []) {
      if (at < from || at > to) continue;
      longest = Math.max(longest, at - last);
      last = at;
    }
    return Math.max(longest, to - last);
  }

  /** Answers with records each pinned consumer was given (from a replica, or that broker as primary). */
  readonly pinnedAnswers = new Map<string, number>();

  /**
   * A consumer that sends FETCH v4 to one broker only (`address()`: where that broker listens now),
   * so what a replica serves is judged as the primary's is: records never taken back, no offset
   * showing two records, and on one connection (one process) the high watermark never going back.
   * A refusal (NOT_PRIMARY: not in sync, not told the commit yet) is waited out on the same broker.
   */
  startPinnedConsumer(name: string, address: () => string): void {
    this.pinnedAnswers.set(name, 0);
    this.running.push(this.consumeLoop(name, address));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  /** Resolves once `n` more records have been acknowledged (bounded by `timeoutMs`). */
  async acknowledgedMore(n: number, timeoutMs: number): Promise<number> {
    const start = performance.now();
    const target = this.acknowledged.length + n;
    while (this.acknowledged.length < target) {
      if (performance.now() - start > timeoutMs) {
        throw new Error(
          `${n} more acknowledgements not within ${timeoutMs} ms (${this.acknowledged.length} so far; refusals ${JSON.stringify([...this.refusals])})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return performance.now() - start;
  }

  /** How long after `since` (performance.now()) the first record sent after it was acknowledged. */
  async firstAckAfter(since: number, timeoutMs: number): Promise<number> {
    while (performance.now() - since < timeoutMs) {
      const ack = this.acknowledged.find((a) => a.sentAt > since);
      if (ack !== undefined) return ack.at - since;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no acknowledgement within ${timeoutMs} ms of the fault`);
  }

  /** The longest time without any acknowledgement between `from` and `to` (performance.now()). */
  longestStall(from: number, to: number): number {
    let last = from;
    let longest = 0;
    for (const a of [...this.acknowledged].sort((x, y) => x.at - y.at)) {
      if (a.at < from || a.at > to) continue;
      longest = Math.max(longest, a.at - last);
      last = a.at;
    }
    return Math.max(longest, to - last);
  }

  /**
   * The final log (read from the primary once every fault is over) holds every acknowledged record at
   * its acknowledged offset, no record a broker refused is in it, and every record a reader was
   * shown is the one at that offset.
   */
  check(finalLog: readonly string[]): void {
    const stored = new Set(finalLog);
    for (const [payload, code] of this.refused) {
      assert.ok(!stored.has(payload), `record ${payload} was refused (code ${code}) but is stored`);
    }
    const offsets = new Map<number, string>();
    for (const a of this.acknowledged) {
      const other = offsets.get(a.offset);
      assert.ok(other === undefined, `offset ${a.offset} acknowledged twice: ${other} and ${a.payload}`);
      offsets.set(a.offset, a.payload);
      assert.equal(
        finalLog[a.offset],
        a.payload,
        `acknowledged ${a.ack} record ${a.payload} at ${a.offset} is lost or moved`,
      );
    }
    for (const [offset, payload] of this.seen) {
      assert.equal(finalLog[offset], payload, `a reader was shown ${payload} at ${offset}, later taken back`);
    }
  }

  private async primaryClient(): Promise<RawClient | null> {
    for (const address of this.addresses()) {
      let client: RawClient | undefined;
      try {
        client = await connect(address);
        const md = await withTimeout(metadata(client, [this.topic]), REQUEST_TIMEOUT_MS, 'METADATA');
        const primary = md.topics[0]?.partitions[this.partition]?.route.primary ?? '';
        client.close();
        if (primary === '') continue;
        return await connect(primary);
      } catch {
        client?.close();
      }
    }
    return null;
  }

  private note(what: string): void {
    this.refusals.set(what, (this.refusals.get(what) ?? 0) + 1);
  }

  private async produceLoop(producer: number): Promise<void> {
    let client: RawClient | null = null;
    for (let seq = 0; !this.stopping; ) {
      if (client === null || client.closed) {
        client = await this.primaryClient();
        if (client === null) {
          this.note('no primary found');
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
      }
      const payload = `p${producer}-${seq}`;
      const sentAt = performance.now();
      const forced = this.random() < 0.3;
      const id = client.id();
      client.send(
        encodeProduceRequest(id, {
          topic: this.topic,
          partition: this.partition,
          ack: forced ? AckPolicy.FORCED : AckPolicy.WRITTEN,
          records: [Buffer.from(payload)],
        }),
      );
      try {
        const frame = await withTimeout(client.expect(id), REQUEST_TIMEOUT_MS, 'PRODUCE');
        if (frame.errorCode !== ErrorCode.NONE) {
          this.note(`code ${frame.errorCode}`);
          if (frame.errorCode === ErrorCode.OUTCOME_UNKNOWN) this.unknown.add(payload);
          else this.refused.set(payload, frame.errorCode);
          // The next send carries a new payload: a refused one must never appear.
          seq++;
          client.close();
          client = null;
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const { baseOffset } = decodeProduceResponse(frame.body);
        this.acknowledged.push({
          offset: baseOffset,
          payload,
          ack: forced ? 'FORCED' : 'WRITTEN',
          sentAt,
          at: performance.now(),
          via: `127.0.0.1:${client.socket.remotePort}`,
        });
        seq++;
      } catch (error) {
        this.note(String((error as Error).message).slice(0, 40));
        this.unknown.add(payload);
        seq++;
        client?.close();
        client = null;
      }
    }
    client?.close();
  }

  private async consumeLoop(name: string, pinned?: () => string): Promise<void> {
    let client: RawClient | null = null;
    let next = 0;
    let highest = 0;
    const encode = pinned === undefined ? encodeFetchRequestV2 : encodeFetchRequestV4;
    while (!this.stopping) {
      if (client === null || client.closed) {
        // A pinned consumer's new connection may reach a restarted process: its watermark starts over.
        if (pinned !== undefined) highest = 0;
        client =
          pinned === undefined ? await this.primaryClient() : await connect(pinned()).catch(() => null);
        if (client === null) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
      }
      const id = client.id();
      client.send(
        encode(id, {
          topic: this.topic,
          partition: this.partition,
          fetchOffset: next,
          maxBytes: 1 << 20,
          maxWaitMs: 100,
          minBytes: 1,
        }),
      );
      try {
        const frame = await withTimeout(client.expect(id), REQUEST_TIMEOUT_MS, 'FETCH');
        assert.notEqual(
          frame.errorCode,
          ErrorCode.OFFSET_OUT_OF_RANGE,
          `${name}: offset ${next}, below a high watermark it was shown, is out of range now`,
        );
        if (frame.errorCode !== ErrorCode.NONE) {
          if (pinned === undefined || frame.errorCode !== ErrorCode.NOT_PRIMARY) {
            client.close();
            client = null;
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const answer = fetched(frame, next);
        const answered = this.readsAnswered.get(name) ?? [];
        if (answered.length === 0) this.readsAnswered.set(name, answered);
        answered.push(performance.now());
        if (pinned !== undefined && answer.records.length > 0) {
          this.pinnedAnswers.set(name, (this.pinnedAnswers.get(name) ?? 0) + 1);
        }
        assert.ok(
          answer.highWatermark >= highest,
          `${name}: the high watermark went back from ${highest} to ${answer.highWatermark}`,
        );
        highest = answer.highWatermark;
        for (const record of answer.records) {
          const before = this.seen.get(next);
          assert.ok(
            before === undefined || before === record,
            `${name}: offset ${next} showed ${before}, then ${record}`,
          );
          this.seen.set(next, record);
          next++;
        }
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error;
        client?.close();
        client = null;
      }
    }
    client?.close();
  }
}
