import { ApiKey, apiRowOf, apiRows } from '@booblik/protocol';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ClusterNode } from './cluster/cluster-node.js';
import type { BrokerMetrics } from './metrics.js';
import type { PartitionRegistry, ServedPartition } from './partitions.js';
import type { ReplicaLag } from './replication/primary-pipeline.js';
import type { ReplicationService } from './replication/replication-service.js';

/**
 * The Prometheus view of the broker. Nothing here runs per request: the hot path bumps plain
 * numbers in BrokerMetrics, and each metric reads its number when /metrics is scraped (a counter is
 * reset and set to the running total, which only grows).
 */
export function createPrometheusRegistry(
  metrics: BrokerMetrics,
  partitions: PartitionRegistry,
  cluster: () => ClusterNode | undefined = () => undefined,
): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'booblik_process_' });

  const { counter, gauge } = scrapedMetrics(registry);
  const labelled = (name: string, help: string, label: string, read: () => Iterable<[string, number]>) =>
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      collect() {
        this.reset();
        for (const [value, n] of read()) this.inc({ [label]: value }, n);
      },
    });
  const perPartition = (name: string, help: string, read: (p: ServedPartition) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const p of partitions.all()) this.set({ topic: p.topic, partition: String(p.id) }, read(p));
      },
    });

  labelled('booblik_requests_total', 'Requests received, by API (invalid: did not decode)', 'api', () => [
    ...apiRows.map((row): [string, number] => [row.metricLabel, metrics.requests[row.apiKey]!]),
    ['invalid', metrics.invalidRequests],
  ]);
  labelled('booblik_refusals_total', 'Requests refused, by wire error code', 'code', () => metrics.refusals);
  counter('booblik_records_in_total', 'Records appended', () => metrics.recordsIn);
  counter('booblik_bytes_in_total', 'Record bytes appended (as on the wire)', () => metrics.bytesIn);
  counter('booblik_fetch_bytes_out_total', 'FETCH payload bytes sent', () => metrics.fetchBytesOut);
  counter(
    'booblik_silent_refusals_total',
    'PRODUCE requests with ack NONE that were refused (never answered)',
    () => metrics.silentRefusals,
  );
  counter('booblik_connections_accepted_total', 'Connections accepted', () => metrics.connectionsAccepted);
  counter(
    'booblik_connections_rejected_total',
    'Connections closed at once because booblik.max.connections was reached',
    () => metrics.connectionsRejected,
  );
  counter(
    'booblik_connections_invalid_length_total',
    'Connections closed because a frame length was outside 1..8 MiB',
    () => metrics.connectionsClosedInvalidLength,
  );
  labelled(
    'booblik_authentications_total',
    'AUTHENTICATE outcomes (rate_limited: refused unseen)',
    'result',
    () => [
      ['success', metrics.authSucceeded],
      ['failure', metrics.authFailed],
      ['rate_limited', metrics.authRateLimited],
    ],
  );
  counter(
    'booblik_connections_unauthenticated_closed_total',
    'Connections closed for not authenticating in time (booblik.auth=required)',
    () => metrics.connectionsClosedUnauthenticated,
  );
  counter('booblik_storage_errors_total', 'Reads and writes the disk refused', () => metrics.storageErrors);
  gauge('booblik_connections', 'Open client connections', () => metrics.connectionsOpen);
  counter(
    'booblik_fetch_replica_reads_total',
    'FETCH v4 answered by this broker as an in-sync replica of the partition',
    () => metrics.replicaReads,
  );
  gauge('booblik_held_fetches', 'FETCH requests waiting for data (long poll)', () => metrics.heldFetches);
  perPartition(
    'booblik_partition_high_watermark',
    'First offset not yet written',
    (p) => p.highWatermark.value,
  );
  perPartition('booblik_partition_log_start_offset', 'First offset still stored', (p) => p.logStartOffset);
  perPartition('booblik_partition_size_bytes', 'Bytes stored', (p) => p.sizeBytes);
  perPartition('booblik_partition_segments', 'Segment files', (p) => p.segmentCount);
  gauge(
    'booblik_partitions_failed',
    'Partitions that could not be opened here: not served, listed on /readyz',
    () => partitions.failed().length,
  );
  perPartition(
    'booblik_partition_fsyncs',
    'fdatasync calls made for FORCED groups',
    (p) => p.writerStats.forcedSyncs,
  );
  perPartition('booblik_partition_groups', 'Group-commit groups written', (p) => p.writerStats.groups);
  addClusterMetrics(registry, cluster, gauge, counter);
  return registry;
}

/**
 * Metrics that read a plain number when scraped: a counter is reset and set to the running total
 * (which only grows), a gauge set to the value.
 */
export function scrapedMetrics(registry: Registry) {
  return {
    counter: (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      }),
    gauge: (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      }),
  };
}

/** The `api` label of an API: its row's. */
function labelOf(apiKey: number): string {
  return apiRowOf(apiKey)!.metricLabel;
}

/** Present on every broker; zero on one node. */
function addClusterMetrics(
  registry: Registry,
  cluster: () => ClusterNode | undefined,
  gauge: (name: string, help: string, read: () => number) => Gauge,
  counter: (name: string, help: string, read: () => number) => Counter,
): void {
  gauge(
    'booblik_cluster_members',
    "Live members of the cluster, by this broker's copy",
    () => cluster()?.copy.members.size ?? 0,
  );
  gauge('booblik_cluster_leader', '1 while this broker leads the allocator', () =>
    cluster()?.allocator.isLeader ? 1 : 0,
  );
  gauge('booblik_cluster_ready', '1 while this broker holds a live lease', () => (cluster()?.ready ? 1 : 0));
  gauge(
    'booblik_cluster_revision',
    "The etcd revision of this broker's copy",
    () => cluster()?.copy.revision ?? 0,
  );
  gauge('booblik_cluster_assignments', 'Assignments in the cluster', () => {
    let n = 0;
    for (const _ of cluster()?.copy.assignments() ?? []) n++;
    return n;
  });
  gauge('booblik_cluster_owned_partitions', 'Partitions this broker owns', () => {
    const node = cluster();
    let n = 0;
    for (const owner of node?.copy.owners.values() ?? []) if (owner.member === node?.memberId) n++;
    return n;
  });
  new Counter({
    name: 'booblik_proxied_requests_total',
    help: 'Requests forwarded to the primary of their partition, by API',
    labelNames: ['api'],
    registers: [registry],
    collect() {
      this.reset();
      const stats = cluster()?.proxy.stats;
      if (stats === undefined) return;
      this.inc({ api: labelOf(ApiKey.PRODUCE) }, stats.produce);
      this.inc({ api: labelOf(ApiKey.FETCH) }, stats.fetch);
      this.inc({ api: labelOf(ApiKey.METADATA) }, stats.metadata);
    },
  });
  counter(
    'booblik_proxy_failures_total',
    'Forwarded requests answered NO_PRIMARY (peer failed or moved)',
    () => cluster()?.proxy.stats.failed ?? 0,
  );
  counter(
    'booblik_etcd_round_trips_total',
    'etcd writes made by the allocator',
    () => cluster()?.allocator.stats.roundTrips ?? 0,
  );
  addReplicationMetrics(registry, () => cluster()?.replication, counter);
  counter(
    'booblik_failovers_total',
    "Primaries replaced by an in-sync replica, written by this broker as the allocator's leader",
    () => cluster()?.allocator.stats.promotions ?? 0,
  );
}

/** Per replica of each partition this broker is primary of: how far behind, and what it copied. */
function addReplicationMetrics(
  registry: Registry,
  replication: () => ReplicationService | undefined,
  counter: (name: string, help: string, read: () => number) => Counter,
): void {
  const perReplica = (name: string, help: string, read: (lag: ReplicaLag) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['topic', 'partition', 'replica'],
      registers: [registry],
      collect() {
        this.reset();
        for (const pipeline of replication()?.pipelines ?? []) {
          for (const lag of pipeline.replicaStates()) {
            this.set(
              { topic: pipeline.topic, partition: String(pipeline.id), replica: lag.member },
              read(lag),
            );
          }
        }
      },
    });
  perReplica(
    'booblik_replication_lag_records',
    'Records the replica lacks of what its primary (this broker) has written',
    (lag) => lag.lagRecords,
  );
  perReplica(
    'booblik_replication_lag_ms',
    'How long the replica has been behind its primary (0: level); past booblik.replica.lag.max.millis it leaves the in-sync set',
    (lag) => lag.behindMs,
  );
  perReplica(
    'booblik_replication_copied_records',
    'Records copied to the replica to catch it up (not live groups), in this epoch',
    (lag) => lag.copiedRecords,
  );
  new Gauge({
    name: 'booblik_partition_epoch',
    help: 'The epoch of each partition this broker is primary of',
    labelNames: ['topic', 'partition'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of replication()?.pipelines ?? [])
        this.set({ topic: p.topic, partition: String(p.id) }, p.epoch);
    },
  });
  counter(
    'booblik_in_sync_changes_total',
    'Replicas this broker, as primary, removed from or added back to an in-sync set',
    () => replication()?.stats.inSyncChanges ?? 0,
  );
  counter(
    'booblik_primary_starts_total',
    'Times this broker became primary of a replicated partition (a new epoch)',
    () => replication()?.stats.promotions ?? 0,
  );
}
