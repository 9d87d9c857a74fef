import type { Logger } from '@booblik/log';
import type { Clock, ReplicateAnswer, ReplicateRequest } from '@booblik/protocol';
import type { Forwarder, Membership } from '../cluster-surface.js';
import type { BrokerMetrics } from '../metrics.js';
import type { PartitionRegistry, PartitionResolver } from '../partitions.js';
import type { RateLimitedLog } from '../rate-limited-log.js';
import type { RequestRouter } from '../routing/request-router.js';
import type { SecurityService } from '../security/security-service.js';
import type { TopicTable } from '../topics/topic-table.js';

/** What REPLICATE uses of replication (replication/replication-service.ts implements it). */
export interface ReplicaWrites {
  handleReplicate(req: ReplicateRequest): ReplicateAnswer | Promise<ReplicateAnswer>;
}

/** What every handler may use. */
export interface ApiContext {
  /** The partitions open here. */
  registry: PartitionRegistry;
  /** Where a partition is served: the registry on one node, the cluster's routes in a cluster. */
  routing: PartitionResolver;
  /** Decides where a PRODUCE or FETCH is served: the handlers act on its decision alone. */
  router: RequestRouter;
  /** In a cluster: forwards what another broker serves. */
  proxy: Forwarder | null;
  /** In a cluster: this broker's membership (MOVE). */
  cluster: Membership | null;
  /** In a cluster: primaries' pipelines and replicas' sides of replicated partitions. */
  replication: ReplicaWrites | null;
  /** The topic specs and their revision (APPLY, LIST, METADATA v2). */
  topics: TopicTable;
  metrics: BrokerMetrics;
  logger: Logger;
  /** For lines a misbehaving client could otherwise repeat thousands of times a second. */
  noisyLog: RateLimitedLog;
  /** Who may connect: users, tokens, the gate before authentication. */
  security: SecurityService;
  /** The broker's clock for waits: a held FETCH's, a LIST watch's (tests pass a manual one). */
  clock: Clock;
}
