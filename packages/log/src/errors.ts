/** Failures of the log, each a class the broker maps to a wire code or a log line. */

/** A record whose header and payload cannot fit even an empty segment. Nothing of its batch is written. */
export class RecordTooLargeError extends Error {
  override name = 'RecordTooLargeError';
  constructor(
    readonly recordIndex: number,
    readonly recordBytes: number,
    readonly segmentBytesMax: number,
  ) {
    super(
      `records[${recordIndex}]: ${recordBytes} bytes plus its 8-byte header cannot fit a segment of ${segmentBytesMax} bytes`,
    );
  }
}

/** A read outside [logStartOffset, highWatermark]. */
export class OffsetOutOfRangeError extends Error {
  override name = 'OffsetOutOfRangeError';
  constructor(
    readonly offset: number,
    readonly logStartOffset: number,
    readonly highWatermark: number,
  ) {
    super(`offset ${offset} is outside [${logStartOffset}, ${highWatermark}]`);
  }
}

/**
 * The disk refused a write (full, read-only, failing; nothing of the refused batch is kept) or a read
 * (EIO; nothing is answered from it).
 */
export class StorageError extends Error {
  override name = 'StorageError';
  constructor(
    message: string,
    /** The system error code (ENOSPC, EIO, ...), when there is one. */
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A truncation refused, nothing changed: `offset` is below the high watermark (a reader may have
 * seen the records), past the log end, or below the local segments (history only in a store). A
 * replica answers it OFFSET_MISMATCH. Still a RangeError, as it was before it had its own class.
 */
export class TruncationRefusedError extends RangeError {
  override name = 'TruncationRefusedError';
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** The partition is closing or closed: appends are refused, reads end. */
export class LogClosedError extends Error {
  override name = 'LogClosedError';
  constructor(readonly partition: string) {
    super(`partition ${partition} is closed`);
  }
}

/** A batch expected to land at an offset the partition's end was not at. Nothing of it is written. */
export class OffsetMismatchError extends Error {
  override name = 'OffsetMismatchError';
  constructor(
    readonly expectedOffset: number,
    /** The partition's end when the batch's turn came: where the next batch would land. */
    readonly logEndOffset: number,
  ) {
    super(`expected offset ${expectedOffset}, but the partition ends at ${logEndOffset}`);
  }
}

/**
 * Stored bytes sent for replication that are not what they claim: a record whose CRC-32C does not
 * match, a size that does not frame, or a record count that differs. Nothing of the group is written.
 */
export class CorruptRecordError extends Error {
  override name = 'CorruptRecordError';
  constructor(
    /** Offset the bad record would have had (the group's base plus its index). */
    readonly offset: number,
    readonly reason: 'crc-mismatch' | 'bad-size' | 'short-header' | 'past-end' | 'count-mismatch',
    detail: string,
  ) {
    super(`record at offset ${offset}: ${detail}`);
  }
}

/** The partition's epoch history file cannot be read as one. Nothing is guessed from it. */
export class EpochHistoryError extends Error {
  override name = 'EpochHistoryError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}
