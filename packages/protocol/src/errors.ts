/**
 * Wire error codes (spec section 6) and the error classes of the protocol package. Codes are fixed
 * forever: never renumber one.
 */

export const ErrorCode = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 1,
  OFFSET_OUT_OF_RANGE: 2,
  RECORD_TOO_LARGE: 3,
  UNSUPPORTED_VERSION: 4,
  CORRUPT_REQUEST: 5,
  /** An addition to the spec's table: clients that predate it show it as UNKNOWN(6), as the spec requires. */
  STORAGE_ERROR: 6,
  // Additions after v1 (docs/protocol.md). Codes 7, 8, 11 and 17 carry a body; the others do not.
  /** APPLY: a change's expected revision is not the topic's; body names the topic and both revisions. */
  REVISION_MISMATCH: 7,
  /** PRODUCE v2: the partition's end is not the expected offset; body carries the actual end. */
  OFFSET_MISMATCH: 8,
  /** Cluster: this broker is not the partition's primary; to PRODUCE v3 and FETCH v3, body is the route. */
  NOT_PRIMARY: 9,
  /** Cluster: the partition has no primary right now (its broker is gone, or it is being opened). */
  NO_PRIMARY: 10,
  /** A field decodes but its value is not allowed (a spec, a selector); body says which and why. */
  INVALID_ARGUMENT: 11,
  /** PRODUCE to a topic whose spec has the read-only flag. */
  TOPIC_READ_ONLY: 12,
  /** Cluster: etcd cannot be reached, or this broker's copy did not reach a request's minimum revision in time. */
  CLUSTER_UNAVAILABLE: 13,
  /** Cluster: fewer in-sync replicas than the topic's minimum; the batch was not acknowledged. */
  NOT_ENOUGH_REPLICAS: 14,
  /** Broker to broker: a REPLICATE from a primary of an older epoch (it was replaced). */
  STALE_EPOCH: 15,
  /**
   * The request was taken but its outcome is not known: a PRODUCE batch already written may still
   * be acknowledged by a later primary, an APPLY sent to etcd may have been applied. Not a refusal:
   * sending it again may store it twice.
   */
  OUTCOME_UNKNOWN: 16,
  /**
   * FETCH v5: the records the consumer read before its position, from the offset the body names, are
   * not in the log any more (restored from its store after a lost disk); those offsets hold other
   * records now. Body: the consumer's epoch as the log knows it, and where it ends.
   */
  RECORDS_LOST: 17,
  /** `booblik.tls=required` and this connection is plaintext: its first request is answered so, then closed. */
  TLS_REQUIRED: 18,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

export interface ErrorInfo {
  readonly code: number;
  readonly name: ErrorCodeName;
  /** Whether repeating the same request later can succeed without the caller changing it. */
  readonly retriable: boolean;
  readonly description: string;
}

export const errorTable: readonly ErrorInfo[] = [
  { code: 0, name: 'NONE', retriable: false, description: 'success' },
  {
    code: 1,
    name: 'UNKNOWN_TOPIC_OR_PARTITION',
    retriable: false,
    description: 'no such topic or partition',
  },
  {
    code: 2,
    name: 'OFFSET_OUT_OF_RANGE',
    retriable: false,
    description: 'fetchOffset outside [logStartOffset, highWatermark]',
  },
  { code: 3, name: 'RECORD_TOO_LARGE', retriable: false, description: 'a record cannot fit in a segment' },
  {
    code: 4,
    name: 'UNSUPPORTED_VERSION',
    retriable: false,
    description: 'unknown apiKey, or a version that API does not have',
  },
  {
    code: 5,
    name: 'CORRUPT_REQUEST',
    retriable: false,
    description: 'the frame does not decode or breaks a rule of the protocol',
  },
  {
    code: 6,
    name: 'STORAGE_ERROR',
    retriable: true,
    description: 'the broker could not write to its disk (full or failing); nothing of the batch was stored',
  },
  {
    code: 7,
    name: 'REVISION_MISMATCH',
    retriable: false,
    description: 'an APPLY change expected another revision of its topic; nothing of the APPLY was applied',
  },
  {
    code: 8,
    name: 'OFFSET_MISMATCH',
    retriable: false,
    description: "the partition's end is not the batch's expected offset; nothing of the batch was written",
  },
  {
    code: 9,
    name: 'NOT_PRIMARY',
    retriable: true,
    description:
      "this broker is not the partition's primary; a client that follows routes goes to the one named",
  },
  {
    code: 10,
    name: 'NO_PRIMARY',
    retriable: true,
    description: 'the partition has no primary at the moment (its broker is away); retry later',
  },
  {
    code: 11,
    name: 'INVALID_ARGUMENT',
    retriable: false,
    description: 'a value is not allowed (a topic spec, a selector); the answer says which and why',
  },
  {
    code: 12,
    name: 'TOPIC_READ_ONLY',
    retriable: false,
    description: 'the topic is read-only: its spec refuses appends',
  },
  {
    code: 13,
    name: 'CLUSTER_UNAVAILABLE',
    retriable: true,
    description:
      "the cluster's etcd cannot be reached, or the broker has not caught up with the revision asked for",
  },
  {
    code: 14,
    name: 'NOT_ENOUGH_REPLICAS',
    retriable: true,
    description:
      "fewer replicas are in sync than the topic's minInSync; the batch was not acknowledged (it may still appear once they are back)",
  },
  {
    code: 15,
    name: 'STALE_EPOCH',
    retriable: false,
    description: 'broker to broker: a write from a primary that has been replaced by a later epoch',
  },
  {
    code: 16,
    name: 'OUTCOME_UNKNOWN',
    retriable: false,
    description:
      'the request may or may not have taken effect (a batch written but not acknowledged, an APPLY whose answer from etcd was lost); sending it again may apply it twice',
  },
  {
    code: 17,
    name: 'RECORDS_LOST',
    retriable: false,
    description:
      "FETCH v5: records before the consumer's position, from the offset the answer names, were lost (the partition was restored from its store); those offsets hold other records now",
  },
  {
    code: 18,
    name: 'TLS_REQUIRED',
    retriable: false,
    description: 'the broker requires TLS: connect with TLS (--tls)',
  },
];

const byCode = new Map(errorTable.map((e) => [e.code, e]));

/** The name of a wire code; a code this version does not know prints as `UNKNOWN(n)` instead of failing. */
export function errorName(code: number): string {
  return byCode.get(code)?.name ?? `UNKNOWN(${code})`;
}

export function errorInfo(code: number): ErrorInfo | undefined {
  return byCode.get(code);
}

/**
 * A request the broker must refuse with a wire error code. Thrown by the request decoders; the
 * message says which field broke which rule (`partition: -1, expected >= 0`).
 */
export class RequestError extends Error {
  override name = 'RequestError';
  constructor(
    readonly code: number,
    message: string,
    /** The request's correlationId when the header was intact; 0 otherwise (spec section 1). */
    readonly correlationId = 0,
  ) {
    super(message);
  }
  get codeName(): string {
    return errorName(this.code);
  }
}

/** Bytes from the peer that break the protocol (a response frame of impossible length, a wrong id). */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

/** A stored record that fails its checks (CRC-32C mismatch, impossible size): never hand it to a caller. */
export class CorruptRecordError extends Error {
  override name = 'CorruptRecordError';
  constructor(
    /** Offset of the corrupt record. */
    readonly offset: number,
    readonly detail: string,
    /** The CRC stored with the record and the one computed, when the failure is a mismatch. */
    readonly storedCrc?: number,
    readonly computedCrc?: number,
  ) {
    super(`record at offset ${offset} is corrupt: ${detail}`);
  }
}

/**
 * The next record can never arrive whole with this maxBytes: retrying would stall forever while
 * looking exactly like a caught-up consumer. Raising maxBytes is the only fix.
 */
export class RecordExceedsMaxBytesError extends Error {
  override name = 'RecordExceedsMaxBytesError';
  constructor(
    /** Offset of the record that does not fit. */
    readonly offset: number,
    /** The record's payload size from its header, or -1 when not even the header arrived. */
    readonly recordBytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `record at offset ${offset} ${recordBytes >= 0 ? `holds ${recordBytes} bytes` : 'does not fit'}; ` +
        `it can never arrive whole with maxBytes ${maxBytes}: raise maxBytes`,
    );
  }
}
