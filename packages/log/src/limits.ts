/**
 * Every default and limit of the log in one place, each with why it is what it is. Units last in
 * names (`...Bytes`, `...Ms`, `...Entries`); config.ts builds the defaults of a partition from these.
 */

/** Large segments keep the file count low; 512 MiB is the original broker's default too. */
export const DEFAULT_SEGMENT_MAX_BYTES = 512 * 1024 * 1024;
/** Smallest segment: one record of one byte (8-byte header + 1). Tests use tiny segments to hit boundaries. */
export const SEGMENT_MIN_BYTES = 9;
/** Segment positions are kept as uint32 in the index; 2 GiB keeps every position well inside it. */
export const SEGMENT_LIMIT_BYTES = 2 ** 31 - 1;

/** One index entry per page: a lookup then reads at most ~4 KiB of headers to find an offset. */
export const DEFAULT_INDEX_INTERVAL_BYTES = 4096;
/** Entries a fragment's index keeps at most: enough to find an offset without reading far. */
export const FRAGMENT_INDEX_MAX_ENTRIES = 256;

/** -1 in a retention setting: no limit of that kind. */
export const RETENTION_UNLIMITED = -1;
/** Nothing is removed unless a topic asks: losing records is the operator's choice, not ours. */
export const DEFAULT_RETENTION_BYTES = RETENTION_UNLIMITED;
/** As `DEFAULT_RETENTION_BYTES`, by age. */
export const DEFAULT_RETENTION_MS = RETENTION_UNLIMITED;
/** With a store, local copies stay unless asked otherwise: reads from disk are the cheap ones. */
export const DEFAULT_LOCAL_RETENTION_BYTES = RETENTION_UNLIMITED;
/** As `DEFAULT_LOCAL_RETENTION_BYTES`, by age. */
export const DEFAULT_LOCAL_RETENTION_MS = RETENTION_UNLIMITED;

/** No fdatasync by count: durability is asked per batch (FORCED), not paid by every producer. */
export const DEFAULT_FLUSH_EVERY_RECORDS = 0;
/** No fdatasync by time, for the same reason. */
export const DEFAULT_FLUSH_EVERY_MS = 0;

/**
 * 64 MiB of queued stored bytes per partition: several seconds of the fastest producer at the disk's
 * page-cache rate, yet a small fraction of memory.
 */
export const DEFAULT_WRITER_QUEUE_MAX_BYTES = 64 * 1024 * 1024;
/** 8 MiB: a few hundred milliseconds of writes at full speed, enough for every consumer that keeps up. */
export const DEFAULT_TAIL_CACHE_BYTES = 8 * 1024 * 1024;

/** Reads smaller than this use ordinary allocations: small buffers come from Node's own slab. */
export const READ_POOLED_MIN_BYTES = 64 * 1024;
/** At most this much sits idle in the read pool: enough for a few dozen 1 MiB reads in flight. */
export const DEFAULT_READ_POOL_BYTES = 32 * 1024 * 1024;
/** Read size for the recovery scan: large reads keep syscalls rare; 8 MiB is past the point of gains. */
export const RECOVERY_READ_BYTES = 8 * 1024 * 1024;
