import { Gauge, type Registry } from 'prom-client';
import type { TlsService } from './tls-service.js';

/** When the broker's certificate and its CA file's first-expiring certificate expire, read when scraped. */
export function registerTlsMetrics(registry: Registry, service: TlsService): void {
  new Gauge({
    name: 'booblik_tls_certificate_expiry_timestamp_seconds',
    help: 'When a TLS certificate in use expires (Unix seconds): file="cert" the broker\'s own, file="ca" the first to expire of the CA file',
    labelNames: ['file'],
    registers: [registry],
    collect() {
      this.reset();
      const { certExpiresAtMs, caExpiresAtMs } = service.watch;
      this.set({ file: 'cert' }, Math.floor(certExpiresAtMs / 1000));
      if (caExpiresAtMs !== null) this.set({ file: 'ca' }, Math.floor(caExpiresAtMs / 1000));
    },
  });
}
