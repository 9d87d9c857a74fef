import {
  ApiKey,
  decodeMetadataResponseLocal,
  decodeMetadataResponseV4,
  decodeNotPrimary,
  ErrorCode,
  encodeErrorResponse,
  encodeFetchRequestV3,
  encodeFetchRequestV4,
  encodeMetadataRequestV3,
  encodeMetadataRequestV4,
  type FetchRequest,
  lengthPrefixBytes,
  MetadataFlag,
  type MetadataResponseLocal,
  type MetadataResponseV4,
  type ProduceRequest,
  type Route,
  readResponseFrame,
  requestHeaderBytes,
  stringBytes,
  WireWriter,
} from '@booblik/protocol';
import type { AnswerSink, Reply } from '../reply.js';
import type { PeerAnswer, PeerConnection } from './peer-connection.js';
import { PeerPool } from './peer-pool.js';

/** A peer that answers nothing in this long is treated as gone (see `forward` for what its requests get). */
const PEER_ANSWER_TIMEOUT_MS = 10_000;
/** A NOT_PRIMARY from the peer (routes moved meanwhile) is followed this many times. */
const HOPS_MAX = 2;

export interface PeerProxyStats {
  /** Requests forwarded to their primary, by API. */
  produce: number;
  fetch: number;
  metadata: number;
  /** Forwarded requests answered NO_PRIMARY because the peer failed or moved on. */
  failed: number;
}

/**
 * Forwards requests for partitions another broker serves, so every client (the original v1 ones
 * too) works through any broker. A request is sent on as version 3, so the primary answers
 * NOT_PRIMARY rather than proxy it again if routes moved meanwhile; its answer (v1, v2 and v3
 * answers have the same bytes) is handed back under the client's correlation id, in the client's
 * request order (the session's answer slots keep that).
 */
export class PeerProxy {
  readonly stats: PeerProxyStats = { produce: 0, fetch: 0, metadata: 0, failed: 0 };

  constructor(private readonly pool: PeerPool = new PeerPool()) {}

  get connections(): number {
    return this.pool.size;
  }

  produce(req: ProduceRequest, correlationId: number, route: Route, answer: AnswerSink): void {
    this.stats.produce++;
    const pieces = () => produceFrame(req);
    this.forward(
      route,
      correlationId,
      answer,
      HOPS_MAX,
      (address, onAnswer) => this.pool.quick(address).send(pieces(), PEER_ANSWER_TIMEOUT_MS, onAnswer),
      // The primary may have written the batch: the client must not believe nothing was stored.
      ErrorCode.OUTCOME_UNKNOWN,
    );
  }

  /** An ack NONE PRODUCE: sent on; nobody answers it, here or there. */
  produceUnanswered(req: ProduceRequest, route: Route): void {
    this.stats.produce++;
    this.pool.quick(route.primary).sendUnanswered(produceFrame(req));
  }

  /**
   * A FETCH sent on to the route's primary as v3; with `fromReplica`, to the in-sync replica the
   * route names as v4 instead (the partition has no primary: a replica serves what is committed).
   */
  fetch(
    req: FetchRequest,
    correlationId: number,
    route: Route,
    answer: AnswerSink,
    fromReplica = false,
  ): void {
    this.stats.fetch++;
    const timeoutMs = req.maxWaitMs + PEER_ANSWER_TIMEOUT_MS;
    const encode = fromReplica ? encodeFetchRequestV4 : encodeFetchRequestV3;
    this.forward(route, correlationId, answer, HOPS_MAX, (address, onAnswer) => {
      const frame = encode(0, req);
      if (req.maxWaitMs === 0) {
        this.pool.quick(address).send([frame], timeoutMs, onAnswer);
        return;
      }
      const connection: PeerConnection = this.pool.borrow(address);
      connection.send([frame], timeoutMs, (answerFrame, failure, mayHaveArrived) => {
        this.pool.release(connection);
        onAnswer(answerFrame, failure, mayHaveArrived);
      });
    });
  }

  /** The offsets of the partitions `address` is the primary of, among `topics`. */
  localMetadata(address: string, topics: readonly string[]): Promise<MetadataResponseLocal> {
    const frame = encodeMetadataRequestV3(0, {
      topics: [...topics],
      minRevision: 0,
      flags: MetadataFlag.LOCAL,
    });
    return this.askMetadata(address, frame, decodeMetadataResponseLocal);
  }

  /** The same with each partition's RouteV2 as its primary knows it (with the replicas' lags). */
  localMetadataV4(address: string, topics: readonly string[]): Promise<MetadataResponseV4> {
    const frame = encodeMetadataRequestV4(0, {
      topics: [...topics],
      minRevision: 0,
      flags: MetadataFlag.LOCAL,
    });
    return this.askMetadata(address, frame, decodeMetadataResponseV4);
  }

  private askMetadata<T>(address: string, frame: Buffer, decode: (body: Buffer) => T): Promise<T> {
    this.stats.metadata++;
    return new Promise((resolve, reject) => {
      this.pool.quick(address).send([frame], PEER_ANSWER_TIMEOUT_MS, (answer, failure) => {
        if (answer === null) {
          reject(new Error(failure));
          return;
        }
        try {
          const response = readResponseFrame(answer);
          if (response.errorCode !== ErrorCode.NONE) {
            reject(new Error(`${address} answered METADATA with error ${response.errorCode}`));
            return;
          }
          resolve(decode(response.body));
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  close(): void {
    this.pool.closeAll();
  }

  /** A peer left the cluster (its lease is gone): requests waiting on it fail now. */
  peerGone(address: string): void {
    this.pool.closeTo(address);
  }

  /**
   * Sends to the route's primary and relays the answer; follows a NOT_PRIMARY up to `hops` times. A
   * peer that fails before answering is NO_PRIMARY, unless the request may have reached it: then
   * `lostAnswerCode` (a PRODUCE's outcome there is unknown; a FETCH changed nothing).
   */
  private forward(
    route: Route,
    correlationId: number,
    answer: AnswerSink,
    hops: number,
    send: (address: string, onAnswer: PeerAnswer) => void,
    lostAnswerCode: number = ErrorCode.NO_PRIMARY,
  ): void {
    if (route.primary === '') {
      this.stats.failed++;
      answer.deliver(encodeErrorResponse(correlationId, ErrorCode.NO_PRIMARY));
      return;
    }
    send(route.primary, (frame, _failure, mayHaveArrived) => {
      if (frame === null) {
        this.stats.failed++;
        answer.deliver(
          encodeErrorResponse(correlationId, mayHaveArrived ? lostAnswerCode : ErrorCode.NO_PRIMARY),
        );
        return;
      }
      if (frame.readInt16BE(4) === ErrorCode.NOT_PRIMARY) {
        let next: Route;
        try {
          next = decodeNotPrimary(frame.subarray(6));
        } catch {
          next = { primary: '', replicas: [] };
        }
        if (hops > 0 && next.primary !== route.primary) {
          this.forward(next, correlationId, answer, hops - 1, send, lostAnswerCode);
          return;
        }
        this.stats.failed++;
        answer.deliver(encodeErrorResponse(correlationId, ErrorCode.NO_PRIMARY));
        return;
      }
      answer.deliver(relayed(frame, correlationId));
    });
  }
}

/** The peer's answer under the client's correlation id: a new 8-byte head, the rest as it came. */
function relayed(frame: Buffer, correlationId: number): Reply {
  const head = Buffer.allocUnsafe(lengthPrefixBytes + 4);
  head.writeInt32BE(frame.length, 0);
  head.writeInt32BE(correlationId, 4);
  return [head, frame.subarray(4)];
}

/** PRODUCE v3 as pieces: the fields, then the client's records as they arrived (not copied). */
function produceFrame(req: ProduceRequest): Buffer[] {
  const fieldsBytes = stringBytes(req.topic) + 4 + 1 + 8 + 4;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + fieldsBytes);
  w.int32(requestHeaderBytes + fieldsBytes + req.records.length)
    .int16(ApiKey.PRODUCE)
    .int16(3)
    .int32(0);
  w.string(req.topic).int32(req.partition).int8(req.ack).int64(req.expectedOffset).int32(req.recordCount);
  return [w.done(), req.records];
}
