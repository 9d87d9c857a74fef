import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey } from '../../api.js';
import { supportedApiVersions } from '../../api-table/table.js';
import { readResponseFrame } from '../../frame/header.js';
import { body } from '../../test-support/frames.js';
import { decodeRequest } from '../decode-request.js';
import { decodeApiVersionsResponse, encodeApiVersionsRequest, encodeApiVersionsResponse } from './v1.js';

describe('API_VERSIONS v1', () => {
  it('golden bytes: the request is a header alone', () => {
    const frame = encodeApiVersionsRequest(1);
    assert.equal(frame.toString('hex'), '00000008' + '0006' + '0001' + '00000001');
    assert.equal(decodeRequest(body(frame)).apiKey, ApiKey.API_VERSIONS);
  });

  it('golden bytes and round trip response: a range per API key', () => {
    const frame = encodeApiVersionsResponse(1, [{ apiKey: 1, minVersion: 1, maxVersion: 2 }]);
    assert.equal(frame.toString('hex'), '00000010' + '00000001' + '0000' + '00000001' + '000100010002');
    const all = supportedApiVersions();
    assert.deepEqual(
      decodeApiVersionsResponse(readResponseFrame(body(encodeApiVersionsResponse(1, all))).body),
      all,
    );
  });

  it('this package speaks every addition', () => {
    assert.deepEqual(supportedApiVersions(), [
      { apiKey: 1, minVersion: 1, maxVersion: 3 },
      { apiKey: 2, minVersion: 1, maxVersion: 5 },
      { apiKey: 3, minVersion: 1, maxVersion: 5 },
      { apiKey: 4, minVersion: 1, maxVersion: 2 },
      { apiKey: 5, minVersion: 1, maxVersion: 2 },
      { apiKey: 6, minVersion: 1, maxVersion: 1 },
      { apiKey: 7, minVersion: 1, maxVersion: 1 },
      { apiKey: 8, minVersion: 1, maxVersion: 1 },
      { apiKey: 9, minVersion: 1, maxVersion: 1 },
      { apiKey: 10, minVersion: 1, maxVersion: 1 },
      { apiKey: 11, minVersion: 1, maxVersion: 1 },
    ]);
  });
});
