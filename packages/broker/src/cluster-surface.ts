import type {
  ErrorCode,
  FetchRequest,
  MetadataResponseLocal,
  MetadataResponseV4,
  ProduceRequest,
  Route,
} from '@booblik/protocol';
import type { AnswerSink } from './reply.js';

/**
 * What the handlers use of the cluster, as interfaces: the handlers sit above the cluster's
 * classes and must not import them (cluster/proxy.ts and cluster/cluster-node.ts implement these).
 */

/** Forwards a request to the broker that serves it (an original client knows one broker). */
export interface Forwarder {
  produce(req: ProduceRequest, correlationId: number, route: Route, answer: AnswerSink): void;
  /** An ack NONE PRODUCE: sent on; nobody answers it, here or there. */
  produceUnanswered(req: ProduceRequest, route: Route): void;
  /** With `fromReplica`, to the in-sync replica the route names (the partition has no primary). */
  fetch(
    req: FetchRequest,
    correlationId: number,
    route: Route,
    answer: AnswerSink,
    fromReplica?: boolean,
  ): void;
  /** The offsets of the partitions `address` is the primary of, among `topics`. */
  localMetadata(address: string, topics: readonly string[]): Promise<MetadataResponseLocal>;
  /** The same with each partition's RouteV2 as its primary knows it. */
  localMetadataV4(address: string, topics: readonly string[]): Promise<MetadataResponseV4>;
}

export type MoveOutcome =
  | { code: typeof ErrorCode.NONE; revision: number }
  | { code: typeof ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }
  | { code: typeof ErrorCode.INVALID_ARGUMENT; index: -1; message: string }
  | { code: typeof ErrorCode.CLUSTER_UNAVAILABLE; message: string };

/** This broker's membership of the cluster: its id, and MOVE. */
export interface Membership {
  readonly memberId: string;
  move(
    topic: string,
    partition: number,
    member: string,
    abandonRecords: boolean,
    away?: boolean,
    unclean?: boolean,
  ): Promise<MoveOutcome>;
}
