import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey } from '@booblik/protocol';
import { BrokerMetrics } from './metrics.js';
import { MetricsSummary } from './metrics-summary.js';

function summary() {
  const lines: string[] = [];
  const metrics = new BrokerMetrics();
  const logger = { info: (m: string) => lines.push(m), warn: () => {}, error: () => {} };
  return { lines, metrics, summary: new MetricsSummary(metrics, logger) };
}

describe('metrics summary line', () => {
  it('is not logged while nothing moved since the last one', () => {
    const { lines, metrics, summary: s } = summary();
    s.log();
    assert.deepEqual(lines, [], 'idle since startup');
    metrics.recordsIn += 10;
    metrics.countRequest(ApiKey.PRODUCE);
    s.log();
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^metrics: in \d+ records\/s/);
    s.log();
    s.log();
    assert.equal(lines.length, 1, 'idle again');
  });

  it('is logged when only a gauge moved (a connection opened, a fetch is held)', () => {
    const { lines, metrics, summary: s } = summary();
    metrics.connectionsOpen = 1;
    s.log();
    metrics.heldFetches = 1;
    s.log();
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /1 connections, 1 held fetches/);
  });
});
