import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey, apiRows, decodeApiVersionsResponse, supportedApiVersions } from '@booblik/protocol';
import { sampleRequests } from '@booblik/protocol/testing';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';
import { apiHandlers } from './handlers.js';

describe('dispatch: one handler per row of the API table', () => {
  it('every apiKey the table has has a handler, and nothing else does', () => {
    const handled = apiHandlers.flatMap((h, apiKey) => (h === undefined ? [] : [apiKey]));
    assert.deepEqual(
      handled,
      apiRows.map((r) => r.apiKey),
    );
  });

  it('a request of every version of every API, pipelined, is answered in order and counted under its API', async (t) => {
    const { broker, port } = await startBroker(t);
    const client = await RawClient.connect(port);
    t.after(() => client.close());
    const samples = sampleRequests(100);
    client.send(Buffer.concat(samples.map((s) => s.frame)));
    for (const [i, sample] of samples.entries()) {
      const answer = await client.expect(100 + i);
      if (sample.apiKey === ApiKey.API_VERSIONS) {
        assert.deepEqual(decodeApiVersionsResponse(answer.body), supportedApiVersions());
      }
    }
    for (const row of apiRows) {
      assert.equal(broker.metrics.requests[row.apiKey], row.versions.length, `${row.name} counted`);
    }
    assert.equal(broker.metrics.invalidRequests, 0);
  });
});
