/** Defaults and limits of the `booblik` command, each with its reason. */
import { fetchableRecordBytesMax, recordHeaderBytes } from '@booblik/protocol';

/** Where the broker listens by default: its own default port on this machine. */
export const DEFAULT_BROKER = '127.0.0.1:9092';

/** Environment variable naming the broker, read when --broker is not given. */
export const BROKER_ENV = 'BOOBLIK_BROKER';

/** Environment variable naming the CA file to trust, read when --tls.ca is not given (turns TLS on). */
export const TLS_CA_ENV = 'BOOBLIK_TLS_CA';

/** `health` gives up after this long: a healthy broker answers METADATA in milliseconds. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 5_000;

/** Below this many records a produce finishes before a progress line would be worth reading. */
export const PROGRESS_AFTER_RECORDS = 10_000;

/** A progress line redrawn more often than this only flickers. */
export const PROGRESS_INTERVAL_MS = 250;

/** Length-prefixed input: a record's int32 length prefix, as on the PRODUCE wire. */
export const LENGTH_PREFIX_BYTES = 4;

export const ExitCode = {
  /** The command did what was asked. */
  OK: 0,
  /** It could not: a refusal, a lost connection, an unhealthy broker, records that failed. */
  FAILURE: 1,
  /** The command line itself is wrong (unknown verb or flag, a missing or malformed argument). */
  USAGE: 2,
} as const;

/**
 * Longest record read from stdin: the largest payload a FETCH answer carries whole (its 8 MiB frame
 * less the largest answer's 30 bytes of headers, FETCH v5's, and the record's own 8), 8,388,570 bytes. The broker refuses
 * a larger one (RECORD_TOO_LARGE), so it is never sent, and input is not buffered beyond it. A
 * PRODUCE frame can hold less (records.ts, recordBytesMaxFor).
 */
export const INPUT_RECORD_BYTES_MAX = fetchableRecordBytesMax - recordHeaderBytes;

/**
 * Longest cell of a table column before the last, in characters: a 249-character topic name would
 * otherwise pad every row to its width. Longer cells end in "…"; --format json and yaml keep them whole.
 */
export const TABLE_CELL_CHARS_MAX = 48;

/** `consume --follow`: first pause after a failure it waits through (NO_PRIMARY, a lost broker). */
export const FOLLOW_RETRY_DELAY_MS = 100;

/** The longest such pause, doubled from the first: a broker back is found within seconds. */
export const FOLLOW_RETRY_DELAY_MS_MAX = 5_000;

/**
 * `consume --follow`: sends of one fetch through the client across route changes before the failure
 * is the follower's to wait through: a NOT_PRIMARY hop and one METADATA, so the waiting line comes
 * within moments instead of after the client's own eight attempts.
 */
export const FOLLOW_ROUTE_ATTEMPTS_MAX = 3;
