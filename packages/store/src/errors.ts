/**
 * Failures of an object store, one class per thing a caller does differently: a missing object is
 * an answer, an unavailable store is retried later, a refusal needs a person (credentials, a bucket,
 * a path), a lost conditional put means another writer got there first. `cause` keeps the error of
 * the SDK or the file system.
 */

/** What every store error carries: the store's URL and the operation and key it was doing. */
export abstract class StoreError extends Error {
  /** True when the same call may succeed later without anything being changed by a person. */
  abstract readonly retriable: boolean;
  constructor(
    readonly storeUrl: string,
    readonly operation: string,
    readonly key: string | undefined,
    /** What went wrong, without the URL, operation and key around it. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${storeUrl}: ${operation}${key === undefined ? '' : ` ${JSON.stringify(key)}`}: ${detail}`,
      options,
    );
  }
}

/** The object does not exist (get, head). */
export class ObjectNotFoundError extends StoreError {
  override name = 'ObjectNotFoundError';
  readonly retriable = false;
}

/** The store cannot be reached or failed for now (network, timeout, 5xx, throttling, a full disk). */
export class StoreUnavailableError extends StoreError {
  override name = 'StoreUnavailableError';
  readonly retriable = true;
}

/** The store said no for a reason retrying will not fix (credentials, permissions, no such bucket). */
export class StoreRefusedError extends StoreError {
  override name = 'StoreRefusedError';
  readonly retriable = false;
}

/** A put with `ifAbsent` found the key already there: nothing was written. */
export class ObjectExistsError extends StoreError {
  override name = 'ObjectExistsError';
  readonly retriable = false;
}

/** A store URL or argument that cannot be used; the message names the field and what was expected. */
export class StoreUrlError extends Error {
  override name = 'StoreUrlError';
  constructor(
    readonly url: string,
    readonly field: string,
    detail: string,
  ) {
    super(`store url ${JSON.stringify(url)}: ${field}: ${detail}`);
  }
}

/** A key, prefix or range that no store accepts; thrown before any I/O. */
export class InvalidKeyError extends Error {
  override name = 'InvalidKeyError';
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super(`key ${JSON.stringify(key)}: ${detail}`);
  }
}
