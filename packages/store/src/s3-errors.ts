import {
  ObjectExistsError,
  ObjectNotFoundError,
  type StoreError,
  StoreRefusedError,
  StoreUnavailableError,
} from './errors.js';

/** S3 error names that say "later" although their status is a 4xx. */
const RETRIABLE_NAMES = new Set([
  'RequestTimeout',
  'RequestTimeoutException',
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  // A concurrent conditional write on the same key; S3 asks for a retry.
  'ConditionalRequestConflict',
  // The body that arrived does not match the checksum sent with it: changed in transit, sent again.
  'BadDigest',
]);

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/**
 * Maps an SDK error to the store's classes. No HTTP status at all means the request never got an
 * answer (refused connection, reset, timeout): unavailable. A 404 is a missing object unless it is
 * the bucket that is missing (HEAD has no body, so its 404 cannot tell the two apart).
 */
export function classifyS3Error(
  error: unknown,
  url: string,
  operation: string,
  key: string | undefined,
): StoreError {
  const sdk = (error ?? {}) as SdkError;
  const status = sdk.$metadata?.httpStatusCode;
  const name = sdk.name ?? 'Error';
  const detail = `${name}${status === undefined ? '' : ` (HTTP ${status})`}: ${sdk.message ?? String(error)}`;
  const options = { cause: error };
  if (name === 'NoSuchKey' || (status === 404 && name !== 'NoSuchBucket')) {
    return new ObjectNotFoundError(url, operation, key, 'no such object', options);
  }
  if (status === 412 || name === 'PreconditionFailed') {
    return new ObjectExistsError(url, operation, key, 'an object already has this key (ifAbsent)', options);
  }
  if (status === undefined || status >= 500 || status === 429 || RETRIABLE_NAMES.has(name)) {
    return new StoreUnavailableError(url, operation, key, detail, options);
  }
  return new StoreRefusedError(url, operation, key, detail, options);
}
