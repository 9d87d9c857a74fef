import type { Logger } from '@booblik/log';
import type { ClusterNode } from '../cluster/cluster-node.js';
import type { PeerProxy } from '../cluster/proxy.js';
import type { BrokerMetrics } from '../metrics.js';
import type { PartitionRegistry, PartitionResolver } from '../partitions.js';
import type { RateLimitedLog } from '../rate-limited-log.js';
import type { ReplicationService } from '../replication/replication-service.js';
import type { TopicTable } from '../topics/topic-table.js';

/** What every handler may use. */
export interface ApiContext {
  /** The partitions open here. */
  registry: PartitionRegistry;
  /** Where a partition is served: the registry on one node, the cluster's routes in a cluster. */
  routing: PartitionResolver;
  /** In a cluster: forwards what another broker serves. */
  proxy: PeerProxy | null;
  /** In a cluster: this broker's membership (MOVE). */
  cluster: ClusterNode | null;
  /** In a cluster: primaries' pipelines and replicas' sides of replicated partitions. */
  replication: ReplicationService | null;
  /** The topic specs and their revision (APPLY, LIST, METADATA v2). */
  topics: TopicTable;
  metrics: BrokerMetrics;
  logger: Logger;
  /** For lines a misbehaving client could otherwise repeat thousands of times a second. */
  noisyLog: RateLimitedLog;
}

/** One response frame, as one buffer or as pieces written back to back (a FETCH header and file bytes). */
export type Reply = Buffer | readonly Buffer[] | PooledReply;

/** Pieces that live in a pooled read buffer: `release` once the socket has taken them. */
export interface PooledReply {
  pieces: readonly Buffer[];
  release: () => void;
}

/** Where a handler hands its one answer; it may do so before the handler returns. */
export interface AnswerSink {
  deliver(reply: Reply): void;
  /** The handler failed in a way that is our bug, not the client's: no answer will come. */
  broken(error: unknown): void;
}

/** Hands a pooled reply's buffer back when the reply will never be written (the client left). */
export function discardReply(reply: Reply | null): void {
  if (reply !== null && !Buffer.isBuffer(reply) && 'release' in reply) reply.release();
}
