/** Errors of the `booblik` command. Failures of the client keep their own classes (from @booblik/client). */
import { recordHeaderBytes } from '@booblik/protocol';

/** The command line is wrong; the message says which argument and what was expected. Exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The broker does not speak what the command needs; nothing was sent that it could misread. */
export class BrokerTooOldError extends Error {
  override name = 'BrokerTooOldError';
}

/** Input on stdin that cannot be read as records (a length prefix cut short, a negative length). */
export class InputError extends Error {
  override name = 'InputError';
}

/** The partition asked for is not among the topic's partitions. */
export class PartitionNotFoundError extends Error {
  override name = 'PartitionNotFoundError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly partitions: readonly number[],
  ) {
    super(`topic ${topic} has no partition ${partition} (it has ${describePartitions(partitions)})`);
  }
}

/** `partitions 0..3` for the usual contiguous ids, else the list; `no partitions` for none. */
export function describePartitions(ids: readonly number[]): string {
  if (ids.length === 0) return 'no partitions';
  const sorted = [...ids].sort((a, b) => a - b);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  if (last - first === sorted.length - 1) return `partitions ${first}..${last}`;
  return `partitions ${sorted.join(', ')}`;
}

/**
 * A record that can never arrive whole within the bytes asked for per fetch: the flag to raise is
 * named, with the least that fits (a stored record is its payload plus an 8-byte header).
 */
export class MaxBytesTooSmallError extends Error {
  override name = 'MaxBytesTooSmallError';
  constructor(
    readonly offset: number,
    /** The record's payload size, or -1 when not even its size arrived. */
    readonly recordBytes: number,
    readonly maxBytes: number,
  ) {
    const needed = recordBytes + recordHeaderBytes;
    super(
      recordBytes >= 0
        ? `record at offset ${offset} holds ${recordBytes} bytes, ${needed} with its ${recordHeaderBytes}-byte header; ` +
            `it can never arrive whole with --max-bytes ${maxBytes}: raise --max-bytes to at least ${needed}`
        : `record at offset ${offset} does not fit in --max-bytes ${maxBytes}, not even its ${recordHeaderBytes}-byte ` +
            'header: raise --max-bytes (a record takes its payload plus that header)',
    );
  }
}

/** No broker could say what some partitions of the topic hold (no copy of them answered). */
export class OffsetsNotKnownError extends Error {
  override name = 'OffsetsNotKnownError';
  constructor(
    readonly topic: string,
    readonly partitions: readonly number[],
  ) {
    super(
      `${topic}: the offsets of partition(s) ${partitions.join(', ')} are not known right now: no broker ` +
        'holding a copy answers (a failover under way, or every holder down); try again, or --follow to wait',
    );
  }
}

/** A start offset outside what the partition holds: [logStartOffset, highWatermark]. */
export class OffsetOutOfRangeError extends Error {
  override name = 'OffsetOutOfRangeError';
  constructor(
    readonly offset: number,
    readonly logStartOffset: number,
    readonly highWatermark: number,
  ) {
    super(`offset ${offset} is outside the partition's range ${logStartOffset}..${highWatermark}`);
  }
}

/**
 * A start offset past what a copy of the partition holds, while its primary did not answer: the
 * partition may hold it; nobody could say.
 */
export class OffsetPastCopyError extends Error {
  override name = 'OffsetPastCopyError';
  constructor(
    readonly offset: number,
    readonly logStartOffset: number,
    readonly highWatermark: number,
  ) {
    super(
      `offset ${offset} is past ${logStartOffset}..${highWatermark}, what a copy of the partition holds; its ` +
        'primary did not answer, so it may hold more: try again',
    );
  }
}

/** A topic named on the command line that the broker does not have. */
export class TopicNotFoundError extends Error {
  override name = 'TopicNotFoundError';
  constructor(readonly topics: readonly string[]) {
    super(`no topic ${topics.join(', ')}`);
  }
}

/** None of several bootstrap brokers could be reached; `cause` is the last one's failure. */
export class NoBrokerReachableError extends Error {
  override name = 'NoBrokerReachableError';
  constructor(
    readonly addresses: readonly string[],
    cause: Error,
  ) {
    super(`cannot connect to any of ${addresses.join(', ')}`, { cause });
  }
}

/**
 * The broker's words for a refused MOVE as this command spells them: its refusals name the wire
 * flag (ABANDON_RECORDS, for every client), which `booblik partitions move` takes as --abandon-records.
 */
export function inCliWords(detail: string): string {
  return detail.replaceAll('ABANDON_RECORDS', '--abandon-records');
}

/** A MOVE (partitions move or elect) the broker refused as not allowed; the message says why, in the CLI's words. */
export class MoveRefusedError extends Error {
  override name = 'MoveRefusedError';
  constructor(
    readonly what: string,
    readonly detail: string,
  ) {
    super(`${what} refused: ${inCliWords(detail)}`);
  }
}

/**
 * A follower's position left the partition: retention removed the records before it, or the
 * partition now ends before it (records cut after a failover). The message says how to go on.
 */
export class PositionGoneError extends Error {
  override name = 'PositionGoneError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: number,
    readonly logStartOffset: number,
    readonly highWatermark: number,
  ) {
    super(
      offset < logStartOffset
        ? `${topic}/${partition}: offset ${offset} is gone: retention removed the records before ${logStartOffset}, ` +
            `where the partition now starts; run again with --from earliest (or --partition ${partition} --from ${logStartOffset})`
        : `${topic}/${partition}: offset ${offset} is past the partition's end, ${highWatermark} (records after it ` +
            `were cut, as after a failover that lost them); run again with --partition ${partition} --from ${highWatermark}`,
    );
  }
}

/** The topic being read was deleted: nothing more will arrive. */
export class TopicDeletedError extends Error {
  override name = 'TopicDeletedError';
  constructor(readonly topic: string) {
    super(`topic ${topic} was deleted while it was being read: nothing more will arrive`);
  }
}
