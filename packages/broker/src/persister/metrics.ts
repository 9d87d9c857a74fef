import type { Registry } from 'prom-client';
import { scrapedMetrics } from '../prometheus.js';
import type { PersisterService } from './persister-service.js';

/** The persister's numbers on /metrics, read when scraped. */
export function registerPersisterMetrics(registry: Registry, service: PersisterService): void {
  const { counter, gauge } = scrapedMetrics(registry);
  gauge(
    'booblik_store_failing',
    'Stores whose last call failed (uploads retry with backoff)',
    () => service.health.failingCount,
  );
  gauge(
    'booblik_store_upload_backlog_segments',
    'Closed segments not yet in their store',
    () => service.backlog,
  );
  counter('booblik_store_uploads_total', 'Segments uploaded to a store', () => service.stats.uploads);
  counter(
    'booblik_store_upload_bytes_total',
    'Bytes of segments uploaded',
    () => service.stats.uploadedBytes,
  );
  counter(
    'booblik_store_upload_failures_total',
    'Persister passes that failed',
    () => service.stats.failures,
  );
  counter('booblik_store_deletions_total', 'Objects deleted by retention', () => service.stats.deletions);
  counter(
    'booblik_store_requests_total',
    'Requests to stores (uploads, manifests, deletions, reads)',
    () => service.stats.storeRequests + service.readStats.requests,
  );
  counter('booblik_store_read_bytes_total', 'Bytes read from stores by FETCH', () => service.readStats.bytes);
  counter(
    'booblik_store_cache_hits_total',
    'Store reads answered by the cache',
    () => service.readStats.cacheHits,
  );
  gauge('booblik_store_cache_bytes', 'Bytes held by the store read cache', () => service.cache.sizeBytes);
}
