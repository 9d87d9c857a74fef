import type { AckPolicyValue } from '@booblik/protocol';
import type { AppendBatch } from '../partition-log.js';

/** Where a written group is, from its write to its answer: the moves are in group-state.ts. */
export type GroupState = 'written' | 'syncing' | 'durable' | 'failed' | 'gated' | 'answered';

export interface AppendResult {
  /** Offset of the batch's first record; the rest follow in order. */
  baseOffset: number;
  /** The log's end when the batch was acknowledged (may exceed base + count). */
  logEndOffset: number;
}

/**
 * Told once how an append ended: in the log (or on stable storage, for FORCED), or refused. It may be
 * told before `appendTo` returns (a lone WRITTEN batch is written at once), so a caller sets up
 * whatever the answer needs first. No promise, no closure per batch: the broker's answer path.
 */
export interface AppendWaiter {
  appended(baseOffset: number, logEndOffset: number): void;
  failed(error: Error): void;
}

/**
 * Where a primary's writer hands each group for replication. While one is set, a group is
 * acknowledged and published only once it is durable locally (as ever) and the pipeline has called
 * `commitTo` with an offset at or past its end.
 */
export interface ReplicationGate {
  /**
   * Called right after a group is written locally, in write order, with its stored bytes (the log's
   * own buffer: not to be changed). May be called from inside `appendTo` (a lone batch is written at
   * once), so it must not append to this writer.
   */
  groupWritten(baseOffset: number, stored: Buffer, count: number, forced: boolean): void;
}

/** A batch admitted to the writer and not yet answered. */
export interface Pending {
  batch: AppendBatch;
  storedBytes: number;
  ack: AckPolicyValue;
  waiter: AppendWaiter;
}

/** A group written to the log and waiting to be answered, in write order. */
export interface Group {
  members: Pick<Pending, 'ack' | 'waiter'>[];
  bases: number[];
  /** The log's end right after this group: what is published when it is answered. */
  endOffset: number;
  /** Members that asked FORCED: what its barrier covers. */
  forced: number;
  /** Where it is (see GroupState); changed only through `moveGroup`. */
  state: GroupState;
  /** Why its barrier failed (state `failed`, or `gated` after it). */
  syncError: Error | null;
  /** Written while a replication gate was set: answered only once committed. */
  underGate: boolean;
  /** A replica's: its records are published by `publishCommitted`, not on acknowledgement. */
  replica: boolean;
}

/** Counters for metrics; monotonic. */
export interface WriterStats {
  groups: number;
  batches: number;
  records: number;
  bytes: number;
  /** fdatasync calls made because a member asked FORCED (flush-policy syncs are counted apart). */
  forcedSyncs: number;
  flushSyncs: number;
  storageErrors: number;
}

export function newWriterStats(): WriterStats {
  return { groups: 0, batches: 0, records: 0, bytes: 0, forcedSyncs: 0, flushSyncs: 0, storageErrors: 0 };
}

/**
 * fdatasync calls one partition may have running at once. Concurrent barriers on this kind of disk
 * complete more per second than one at a time (measured here: 1 at a time ~1,650/s, 2 ~3,300/s,
 * 4 ~5,100/s), so a group need not wait for the previous group's barrier before starting its own.
 * Kept below the libuv thread pool's size, which reads from disk share.
 */
export const SYNCS_IN_FLIGHT_MAX = 3;

/**
 * How long an idle disk may wait for the FORCED producers just acknowledged to send again, so that
 * they share the next barrier instead of splitting it: the hold ends as soon as as many FORCED
 * batches have arrived as were acknowledged, and this only bounds it when some producer does not
 * come back. Over TCP the 8 producers of the benchmark's W3 come back over 100-300 µs: a barrier
 * started at the first of them carried 2.5 records on average, this one 8.0 (docs/benchmarks.md,
 * "Per-request cost"). One millisecond is also the timer's resolution.
 */
export const FORCED_GATHER_MS_MAX = 1;
