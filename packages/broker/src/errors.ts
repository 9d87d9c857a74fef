/**
 * The broker's own failures, a class each (`name` set; the cause kept where there is one). Errors of
 * the log, the wire and the cluster keyspace live in their packages; replication's refusal (a wire
 * code) stays beside replication.
 */

/** A value that does not parse or is out of range. The message names the key and what is allowed. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** A port the broker could not bind: refused at startup, naming the key that sets it. */
export class ListenError extends Error {
  override name = 'ListenError';
  constructor(
    readonly key: string,
    readonly port: number,
    readonly host: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    const why =
      code === 'EADDRINUSE' ? 'is in use' : code === 'EACCES' ? 'is not allowed' : 'cannot be bound';
    super(`${key} ${port}: ${host}:${port} ${why} (${code ?? String(options?.cause)})`, options);
  }
}

/** A second broker on a data directory in use: refused before anything in it is read or cut. */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data directory ${dataDir} is in use by pid ${pid}`);
  }
}

/**
 * A data directory that belongs to another cluster or another broker id: starting on it would
 * serve that broker's partitions under a second identity (exit code 2, nothing touched).
 */
export class DataDirForeignError extends Error {
  override name = 'DataDirForeignError';
}

/** The store was changed by someone else between read and write. */
export class SpecStoreConflictError extends Error {
  override name = 'SpecStoreConflictError';
}

/** The store's bytes are not a state this broker can read: startup stops rather than lose topics. */
export class SpecStoreCorruptError extends Error {
  override name = 'SpecStoreCorruptError';
}

/** A request's minimum revision was not reached in time (CLUSTER_UNAVAILABLE, retriable). */
export class RevisionNotReachedError extends Error {
  override name = 'RevisionNotReachedError';
}
