import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey, apiVersionsBeforeDiscovery } from '../api.js';
import { ErrorCode } from '../errors.js';
import { decodeRequest, RequestRefusal } from '../requests/decode-request.js';
import { body, rawRequest } from '../test-support/frames.js';
import { sampleRequests } from '../test-support/sample-requests.js';
import { buildRow } from './build.js';
import { type Capability, capabilityNames, Operation } from './capabilities.js';
import { apiKeyMax, apiRowOf, apiRows, apiVersionOf, speaks, supportedApiVersions } from './table.js';

describe('API table', () => {
  it('every version of every row decodes through its row, carrying that version capabilities', () => {
    const samples = new Map(sampleRequests().map((s) => [`${s.apiKey} v${s.version}`, s.frame]));
    const tableVersions = apiRows.flatMap((row) => row.versions.map((v) => `${row.apiKey} v${v.version}`));
    assert.deepEqual([...samples.keys()], tableVersions, 'a sample request per version, in table order');
    for (const row of apiRows) {
      for (const version of row.versions) {
        const frame = body(samples.get(`${row.apiKey} v${version.version}`)!);
        const request = decodeRequest(frame);
        assert.equal(request.apiKey, row.apiKey);
        assert.equal(request.apiVersion, version.version);
        assert.equal(request.capabilities, version.capabilities, `${row.name} v${version.version}`);
        assert.deepEqual(request.body, version.decode(frame, 8));
      }
    }
  });

  it('a version a row lacks, either side of its range, is UNSUPPORTED_VERSION naming it', () => {
    for (const row of apiRows) {
      for (const version of [0, row.versions.length + 1, -1]) {
        assert.throws(
          () => decodeRequest(rawRequest(row.apiKey, version, 77, Buffer.alloc(0))),
          (e: unknown) =>
            e instanceof RequestRefusal &&
            e.code === ErrorCode.UNSUPPORTED_VERSION &&
            e.message === `apiVersion: ${version}, not a version of apiKey ${row.apiKey}`,
        );
      }
    }
  });

  it('an unknown apiKey is told every key the table has', () => {
    assert.throws(
      () => decodeRequest(rawRequest(0, 1, 77, Buffer.alloc(0))),
      (e: unknown) => {
        assert.ok(e instanceof RequestRefusal && e.code === ErrorCode.UNSUPPORTED_VERSION);
        assert.match(e.message, /^apiKey: 0, expected 1 \(PRODUCE\), 2 \(FETCH\), .* or \d+ \([A-Z_]+\)$/);
        for (const row of apiRows) assert.ok(e.message.includes(`${row.apiKey} (${row.name})`), row.name);
        return true;
      },
    );
  });

  it('API_VERSIONS answers each row from its lowest to its highest version', () => {
    assert.deepEqual(
      supportedApiVersions(),
      apiRows.map((r) => ({ apiKey: r.apiKey, minVersion: 1, maxVersion: r.versions.length })),
    );
    for (const old of apiVersionsBeforeDiscovery) {
      assert.ok(old.maxVersion <= apiRowOf(old.apiKey)!.versions.length, 'what an old broker speaks is ours');
    }
  });

  it('a capability, once a version has it, stays in every later version (but proxied, which following routes ends)', () => {
    // The Python and Go clients rely on it: they compare a broker's highest version with the first
    // version that has the capability.
    for (const row of apiRows) {
      for (const name of capabilityNames) {
        const first = row.versions.findIndex((v) => v.capabilities[name]);
        if (first < 0 || name === 'proxied') continue;
        for (const later of row.versions.slice(first)) {
          assert.ok(later.capabilities[name], `${row.name} v${later.version} lost ${name}`);
        }
      }
    }
  });

  it('what routes a request: proxied to v2, NOT_PRIMARY from v3, replica reads from FETCH v4', () => {
    // What a version that exists means never changes; a version added later keeps what it keeps.
    const has = (apiKey: number, capability: Capability) =>
      apiRowOf(apiKey)!
        .versions.filter((v) => v.capabilities[capability])
        .map((v) => v.version);
    assert.deepEqual(has(ApiKey.PRODUCE, 'proxied'), [1, 2]);
    assert.equal(has(ApiKey.PRODUCE, 'followsRoutes')[0], 3);
    assert.deepEqual(has(ApiKey.FETCH, 'proxied'), [1, 2]);
    assert.equal(has(ApiKey.FETCH, 'followsRoutes')[0], 3);
    assert.equal(has(ApiKey.FETCH, 'replicaReadable')[0], 4);
    assert.equal(has(ApiKey.FETCH, 'carriesEpochs')[0], 5);
    for (const row of apiRows.filter((r) => r.apiKey !== ApiKey.PRODUCE && r.apiKey !== ApiKey.FETCH)) {
      assert.deepEqual(has(row.apiKey, 'proxied'), [], `${row.name} is not forwarded whole`);
    }
  });

  it('each row has its operation and the metric label operators already scrape', () => {
    const rows = new Map(apiRows.map((r) => [r.name, [r.name, r.operation, r.metricLabel]]));
    for (const pinned of [
      ['PRODUCE', Operation.PRODUCE, 'produce'],
      ['FETCH', Operation.FETCH, 'fetch'],
      ['METADATA', Operation.DESCRIBE, 'metadata'],
      ['APPLY', Operation.ALTER, 'apply'],
      ['LIST', Operation.DESCRIBE, 'list'],
      ['API_VERSIONS', Operation.DESCRIBE, 'apiVersions'],
      ['LIST_FRAGMENTS', Operation.DESCRIBE, 'listFragments'],
      ['MOVE', Operation.CLUSTER, 'move'],
      ['REPLICATE', Operation.REPLICATE, 'replicate'],
    ]) {
      assert.deepEqual(rows.get(pinned[0]!), pinned);
    }
    assert.ok(apiRowOf(ApiKey.API_VERSIONS)!.beforeAuthentication, 'asked before anything else');
  });

  it('lookups: a version or key outside the table is not found', () => {
    assert.equal(apiVersionOf(ApiKey.FETCH, 4)!.capabilities.replicaReadable, true);
    assert.equal(apiVersionOf(ApiKey.FETCH, apiRowOf(ApiKey.FETCH)!.versions.length + 1), undefined);
    assert.equal(apiVersionOf(apiKeyMax + 1, 1), undefined);
    assert.equal(apiVersionOf(ApiKey.FETCH, 0), undefined);
    assert.equal(apiVersionOf(-1, 1), undefined);
  });

  it('speaks: a broker speaks a capability when one of the versions it serves has it', () => {
    const ranges = (maxVersion: number, minVersion = 1) => [{ apiKey: ApiKey.FETCH, minVersion, maxVersion }];
    assert.equal(speaks(ranges(2), ApiKey.FETCH, 'followsRoutes'), false, 'the original broker');
    assert.equal(speaks(ranges(3), ApiKey.FETCH, 'followsRoutes'), true);
    assert.equal(speaks(ranges(4), ApiKey.FETCH, 'carriesEpochs'), false);
    assert.equal(speaks(ranges(9), ApiKey.FETCH, 'carriesEpochs'), true, 'a newer broker serves ours too');
    assert.equal(speaks(ranges(5, 3), ApiKey.FETCH, 'proxied'), false, 'a range above every proxied version');
    assert.equal(speaks(ranges(5), ApiKey.PRODUCE, 'followsRoutes'), false, 'no range for the key');
  });
});

describe('API table checks at load', () => {
  const decode = () => null;
  const row = (versions: Record<number, { decode: () => null; has: Capability[] }>) => ({
    operation: Operation.DESCRIBE,
    metricLabel: 'x',
    beforeAuthentication: true,
    versions,
  });

  it('a row whose versions have a gap is refused', () => {
    assert.throws(
      () => buildRow('X', ApiKey.LIST, row({ 1: { decode, has: [] }, 3: { decode, has: [] } })),
      /API table: X v3: versions run from 1 with no gap/,
    );
    assert.throws(() => buildRow('X', ApiKey.LIST, row({ 2: { decode, has: [] } })), /X v2/);
  });

  it('a row without versions is refused', () => {
    assert.throws(() => buildRow('X', ApiKey.LIST, row({})), /API table: X has no version/);
  });

  it('a version both following routes and proxied is refused', () => {
    assert.throws(
      () => buildRow('X', ApiKey.LIST, row({ 1: { decode, has: ['followsRoutes', 'proxied'] } })),
      /API table: X v1: follows routes and is proxied/,
    );
  });
});
