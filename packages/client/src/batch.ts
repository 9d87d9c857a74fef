/**
 * A producer batch: the records bound for one partition in one PRODUCE request.
 *
 *   open ──(full, linger over, flush)──> sealed ──(a request slot is free)──> in flight ──> done
 *                                                                                  └────> failed
 *   open / sealed ──(the producer's connection is gone)──> failed
 *
 * Each record's promise settles exactly once, when the batch does: a batch that fails fails exactly
 * its own records.
 */
import { lengthPrefixBytes, requestHeaderBytes, stringBytes } from '@booblik/protocol';
import type { TimerHandle } from './clock.js';
import { StateMachine } from './state-machine.js';

type BatchState = 'open' | 'sealed' | 'in flight' | 'done' | 'failed';

export interface BatchEntry {
  payload: Uint8Array;
  /** Order of the send() call, producer-wide: flush() waits for everything below a mark. */
  seq: number;
  resolve(offset: number): void;
  reject(error: Error): void;
}

/** PRODUCE fields before the records: topic string, partition int32, ackPolicy int8, recordCount int32. */
export function produceFrameOverheadBytes(topic: string): number {
  return lengthPrefixBytes + requestHeaderBytes + stringBytes(topic) + 4 + 1 + 4;
}

/** A record on the PRODUCE wire: int32 size, then its bytes. */
export function produceRecordBytes(payload: Uint8Array): number {
  return 4 + payload.length;
}

export class Batch {
  readonly entries: BatchEntry[] = [];
  /** Size of the PRODUCE frame these records make, length prefix included. */
  frameBytes: number;
  lingerTimer: TimerHandle | undefined;
  private readonly machine: StateMachine<BatchState>;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {
    this.frameBytes = produceFrameOverheadBytes(topic);
    this.machine = new StateMachine<BatchState>(`batch ${topic}/${partition}`, 'open', {
      open: ['sealed', 'failed'],
      sealed: ['in flight', 'failed'],
      'in flight': ['done', 'failed'],
      done: [],
      failed: [],
    });
  }

  get state(): BatchState {
    return this.machine.state;
  }

  get size(): number {
    return this.entries.length;
  }

  get payloads(): Uint8Array[] {
    return this.entries.map((e) => e.payload);
  }

  add(entry: BatchEntry): void {
    if (!this.machine.is('open'))
      throw new Error(`batch ${this.topic}/${this.partition}: add while ${this.state}`);
    this.entries.push(entry);
    this.frameBytes += produceRecordBytes(entry.payload);
  }

  seal(): void {
    this.machine.to('sealed');
  }

  dispatch(): void {
    this.machine.to('in flight');
  }

  /** Record i gets baseOffset + i; under ack NONE every record gets the same unknown offset. */
  complete(baseOffset: number, offsetsKnown: boolean): void {
    this.machine.to('done');
    this.entries.forEach((e, i) => {
      e.resolve(offsetsKnown ? baseOffset + i : baseOffset);
    });
  }

  fail(error: Error): void {
    this.machine.to('failed');
    for (const e of this.entries) e.reject(error);
  }
}
