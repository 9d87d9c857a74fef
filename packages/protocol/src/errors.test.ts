import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, errorName, errorTable } from './errors.js';

describe('error codes', () => {
  it('keeps the spec numbering, which must never change (6 onwards are additions, not renumberings)', () => {
    assert.deepEqual(
      errorTable.map((e) => [e.code, e.name]),
      [
        [0, 'NONE'],
        [1, 'UNKNOWN_TOPIC_OR_PARTITION'],
        [2, 'OFFSET_OUT_OF_RANGE'],
        [3, 'RECORD_TOO_LARGE'],
        [4, 'UNSUPPORTED_VERSION'],
        [5, 'CORRUPT_REQUEST'],
        [6, 'STORAGE_ERROR'],
        [7, 'REVISION_MISMATCH'],
        [8, 'OFFSET_MISMATCH'],
        [9, 'NOT_PRIMARY'],
        [10, 'NO_PRIMARY'],
        [11, 'INVALID_ARGUMENT'],
        [12, 'TOPIC_READ_ONLY'],
        [13, 'CLUSTER_UNAVAILABLE'],
        [14, 'NOT_ENOUGH_REPLICAS'],
        [15, 'STALE_EPOCH'],
        [16, 'OUTCOME_UNKNOWN'],
        [17, 'RECORDS_LOST'],
        [18, 'TLS_REQUIRED'],
      ],
    );
    for (const e of errorTable) assert.equal(ErrorCode[e.name], e.code);
  });

  it('an unknown code prints as UNKNOWN(n) instead of failing', () => {
    assert.equal(errorName(42), 'UNKNOWN(42)');
    assert.equal(errorName(-1), 'UNKNOWN(-1)');
    assert.equal(errorName(1), 'UNKNOWN_TOPIC_OR_PARTITION');
  });
});
