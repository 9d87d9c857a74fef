import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ObjectExistsError,
  ObjectNotFoundError,
  type StoreError,
  StoreRefusedError,
  StoreUnavailableError,
} from './errors.js';
import { classifyS3Error } from './s3-errors.js';

/** An error shaped as the SDK throws it: a name, and the HTTP status when an answer came. */
function sdkError(name: string, status?: number): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    $metadata: status === undefined ? {} : { httpStatusCode: status },
  });
}

const cases: [string, Error, new (...args: never[]) => StoreError][] = [
  [
    'a refused connection (no answer at all)',
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', $metadata: {} }),
    StoreUnavailableError,
  ],
  ['a socket timeout', sdkError('TimeoutError'), StoreUnavailableError],
  ['500 InternalError', sdkError('InternalError', 500), StoreUnavailableError],
  ['503 SlowDown', sdkError('SlowDown', 503), StoreUnavailableError],
  ['429 from a throttling proxy', sdkError('TooManyRequests', 429), StoreUnavailableError],
  ['400 RequestTimeout', sdkError('RequestTimeout', 400), StoreUnavailableError],
  ['409 ConditionalRequestConflict', sdkError('ConditionalRequestConflict', 409), StoreUnavailableError],
  ['400 BadDigest (the body differs from its checksum)', sdkError('BadDigest', 400), StoreUnavailableError],
  ['403 AccessDenied', sdkError('AccessDenied', 403), StoreRefusedError],
  ['403 SignatureDoesNotMatch', sdkError('SignatureDoesNotMatch', 403), StoreRefusedError],
  ['404 NoSuchBucket', sdkError('NoSuchBucket', 404), StoreRefusedError],
  ['400 InvalidBucketName', sdkError('InvalidBucketName', 400), StoreRefusedError],
  ['404 NoSuchKey', sdkError('NoSuchKey', 404), ObjectNotFoundError],
  ['404 NotFound from a HEAD (no body)', sdkError('NotFound', 404), ObjectNotFoundError],
  ['412 PreconditionFailed', sdkError('PreconditionFailed', 412), ObjectExistsError],
];

describe('S3 errors', () => {
  for (const [what, error, expected] of cases) {
    it(`${what} is ${expected.name}`, () => {
      const classified = classifyS3Error(error, 's3://b/p/', 'get', 'k');
      assert.ok(classified instanceof expected, `got ${classified.name}`);
      assert.equal(classified.retriable, expected === StoreUnavailableError);
      assert.equal(classified.cause, error, 'the SDK error is kept as the cause');
      assert.match(classified.message, /^s3:\/\/b\/p\/: get "k": /);
    });
  }
});
