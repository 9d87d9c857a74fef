import type { Logger } from '@booblik/log';
import type { BrokerMetrics } from './metrics.js';

/**
 * The periodic one-line summary: rates since the last line, and the current gauges. An idle broker
 * logs nothing: a line is written only when a counter or a gauge moved since the last one.
 */
export class MetricsSummary {
  private last: ReturnType<MetricsSummary['snapshot']>;
  private lastAt = performance.now();

  constructor(
    private readonly metrics: BrokerMetrics,
    private readonly logger: Logger,
  ) {
    this.last = this.snapshot();
  }

  private snapshot() {
    const m = this.metrics;
    return {
      records: m.recordsIn,
      bytesIn: m.bytesIn,
      bytesOut: m.fetchBytesOut,
      requests: m.requests.reduce((a, b) => a + b, m.invalidRequests),
      refusals: m.refusalsTotal,
      storageErrors: m.storageErrors,
      connections: m.connectionsOpen,
      heldFetches: m.heldFetches,
    };
  }

  log(): void {
    const now = this.snapshot();
    const at = performance.now();
    const moved = (Object.keys(now) as (keyof typeof now)[]).some((k) => now[k] !== this.last[k]);
    if (!moved) {
      this.lastAt = at;
      return;
    }
    const seconds = Math.max(0.001, (at - this.lastAt) / 1000);
    const rate = (a: number, b: number) => ((a - b) / seconds).toFixed(0);
    const mib = (a: number, b: number) => ((a - b) / seconds / 1048576).toFixed(1);
    this.logger.info(
      `metrics: in ${rate(now.records, this.last.records)} records/s (${mib(now.bytesIn, this.last.bytesIn)} MiB/s), ` +
        `out ${mib(now.bytesOut, this.last.bytesOut)} MiB/s, ${rate(now.requests, this.last.requests)} requests/s, ` +
        `${now.connections} connections, ${now.heldFetches} held fetches, ` +
        `${now.refusals - this.last.refusals} refusals, ${now.storageErrors - this.last.storageErrors} storage errors`,
    );
    this.last = now;
    this.lastAt = at;
  }
}
