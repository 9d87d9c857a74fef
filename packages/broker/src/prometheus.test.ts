import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ApiKey, apiRows } from '@booblik/protocol';
import { BrokerMetrics } from './metrics.js';
import type { PartitionRegistry } from './partitions.js';
import { createPrometheusRegistry } from './prometheus.js';

/** docs/operations.md, from dist/ (the test runs built). */
const operations = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');

async function scrape(metrics: BrokerMetrics): Promise<string> {
  const partitions = { all: () => [], failed: () => [] } as unknown as PartitionRegistry;
  return createPrometheusRegistry(metrics, partitions).metrics();
}

/** `api` label -> count, of booblik_requests_total. */
function requestsTotal(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^booblik_requests_total\{api="(\w+)"\} (\d+)$/gm)) {
    counts.set(m[1]!, Number(m[2]));
  }
  return counts;
}

describe('Prometheus: booblik_requests_total', () => {
  it('counts each API under its row label, and what did not decode as invalid', async () => {
    const metrics = new BrokerMetrics();
    metrics.countRequest(ApiKey.PRODUCE);
    metrics.countRequest(ApiKey.PRODUCE);
    metrics.countRequest(ApiKey.LIST_FRAGMENTS);
    metrics.invalidRequests = 3;
    const counts = requestsTotal(await scrape(metrics));
    assert.deepEqual(
      [...counts.keys()],
      [...apiRows.map((r) => r.metricLabel), 'invalid'],
      'one series per API, even before its first request',
    );
    assert.equal(counts.get('produce'), 2);
    assert.equal(counts.get('listFragments'), 1);
    assert.equal(counts.get('fetch'), 0);
    assert.equal(counts.get('invalid'), 3);
  });

  it('has the labels docs/operations.md lists', async () => {
    const row = operations.split('\n').find((line) => line.startsWith('| `booblik_requests_total{api}`'));
    assert.ok(row, 'docs/operations.md lists booblik_requests_total');
    const documented = [...row.matchAll(/`(\w+)`/g)].map((m) => m[1]);
    const scraped = [...requestsTotal(await scrape(new BrokerMetrics())).keys()];
    assert.deepEqual(documented, scraped);
  });
});
