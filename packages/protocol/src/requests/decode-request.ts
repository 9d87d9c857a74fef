import { ApiKey } from '../api.js';
import { DecodeError } from '../codec/reader.js';
import { ErrorCode, RequestError } from '../errors.js';
import { readRequestHeader } from '../frame/header.js';
import { requestHeaderBytes } from '../limits.js';
import { type ApplyRequest, decodeApplyRequest } from './apply/v1.js';
import { decodeApplyRequestV2 } from './apply/v2.js';
import { decodeFetchRequestV1, type FetchRequest } from './fetch/v1.js';
import { decodeFetchRequestV2 } from './fetch/v2.js';
import { decodeFetchRequestV5 } from './fetch/v5.js';
import { decodeListRequest, type ListRequest } from './list/v1.js';
import { decodeListFragmentsRequest, type ListFragmentsRequest } from './list-fragments/v1.js';
import { decodeMetadataRequest, type MetadataRequest } from './metadata/v1.js';
import { decodeMetadataRequestV3, type MetadataRequestV3 } from './metadata/v3.js';
import { decodeMoveRequest, type MoveRequest } from './move/v1.js';
import { decodeProduceRequest, ProduceDecodeError, type ProduceRequest } from './produce/v1.js';
import { decodeProduceRequestV2 } from './produce/v2.js';
import { decodeReplicateRequest, type ReplicateRequest } from './replicate/v1.js';

export type Request =
  | { apiKey: typeof ApiKey.PRODUCE; apiVersion: number; correlationId: number; body: ProduceRequest }
  | { apiKey: typeof ApiKey.FETCH; apiVersion: number; correlationId: number; body: FetchRequest }
  | {
      apiKey: typeof ApiKey.METADATA;
      apiVersion: number;
      correlationId: number;
      body: MetadataRequest | MetadataRequestV3;
    }
  | { apiKey: typeof ApiKey.APPLY; apiVersion: number; correlationId: number; body: ApplyRequest }
  | { apiKey: typeof ApiKey.LIST; apiVersion: number; correlationId: number; body: ListRequest }
  | { apiKey: typeof ApiKey.API_VERSIONS; apiVersion: number; correlationId: number; body: null }
  | {
      apiKey: typeof ApiKey.LIST_FRAGMENTS;
      apiVersion: number;
      correlationId: number;
      body: ListFragmentsRequest;
    }
  | { apiKey: typeof ApiKey.MOVE; apiVersion: number; correlationId: number; body: MoveRequest }
  | { apiKey: typeof ApiKey.REPLICATE; apiVersion: number; correlationId: number; body: ReplicateRequest };

/**
 * A request frame the broker must refuse. `silent` is set for a PRODUCE with ack NONE: such a
 * request is never answered, not even with a refusal (the client would read it as the answer to its
 * next request), so the broker counts and logs it instead.
 */
export class RequestRefusal extends RequestError {
  override name = 'RequestRefusal';
  constructor(
    code: number,
    message: string,
    correlationId: number,
    readonly apiKey: number,
    readonly silent: boolean,
  ) {
    super(code, message, correlationId);
  }
}

/**
 * Decodes a whole request frame (the bytes after the length prefix, at least the 8-byte header).
 * Throws `RequestRefusal` carrying the wire code and the request's correlationId.
 */
export function decodeRequest(frame: Buffer): Request {
  const { apiKey, apiVersion, correlationId } = readRequestHeader(frame);
  const refuse = (code: number, message: string, silent = false): never => {
    throw new RequestRefusal(code, message, correlationId, apiKey, silent);
  };
  try {
    switch (apiKey) {
      case ApiKey.PRODUCE:
        if (apiVersion === 1) {
          return { apiKey, apiVersion, correlationId, body: decodeProduceRequest(frame, requestHeaderBytes) };
        }
        // v3 is v2's bytes from a client that follows routes (NOT_PRIMARY rather than a proxied answer).
        if (apiVersion === 2 || apiVersion === 3) {
          return {
            apiKey,
            apiVersion,
            correlationId,
            body: decodeProduceRequestV2(frame, requestHeaderBytes),
          };
        }
        break;
      case ApiKey.FETCH:
        if (apiVersion === 1) {
          return { apiKey, apiVersion, correlationId, body: decodeFetchRequestV1(frame, requestHeaderBytes) };
        }
        // v3 and v4 are v2's bytes: v3 follows routes, v4 also takes reads from in-sync replicas.
        if (apiVersion >= 2 && apiVersion <= 4) {
          return { apiKey, apiVersion, correlationId, body: decodeFetchRequestV2(frame, requestHeaderBytes) };
        }
        // v5 is v4 with the epoch of the last record the consumer read.
        if (apiVersion === 5) {
          return { apiKey, apiVersion, correlationId, body: decodeFetchRequestV5(frame, requestHeaderBytes) };
        }
        break;
      case ApiKey.METADATA:
        // v4 and v5 ask v3's question; their answers carry RouteV2 (v5 also where offsets come from).
        if (apiVersion >= 3 && apiVersion <= 5) {
          return {
            apiKey,
            apiVersion,
            correlationId,
            body: decodeMetadataRequestV3(frame, requestHeaderBytes),
          };
        }
        // v2 asks the same question as v1; only the answer differs.
        if (apiVersion !== 1 && apiVersion !== 2) break;
        return { apiKey, apiVersion, correlationId, body: decodeMetadataRequest(frame, requestHeaderBytes) };
      case ApiKey.APPLY:
        if (apiVersion === 1) {
          return { apiKey, apiVersion, correlationId, body: decodeApplyRequest(frame, requestHeaderBytes) };
        }
        // v2 is v1 with op 3: a delete that also purges the topic's store.
        if (apiVersion !== 2) break;
        return { apiKey, apiVersion, correlationId, body: decodeApplyRequestV2(frame, requestHeaderBytes) };
      case ApiKey.LIST:
        // v2 asks v1's question; its answer carries RouteV2.
        if (apiVersion !== 1 && apiVersion !== 2) break;
        return { apiKey, apiVersion, correlationId, body: decodeListRequest(frame, requestHeaderBytes) };
      case ApiKey.API_VERSIONS:
        if (apiVersion !== 1) break;
        return { apiKey, apiVersion, correlationId, body: null };
      case ApiKey.LIST_FRAGMENTS:
        if (apiVersion !== 1) break;
        return {
          apiKey,
          apiVersion,
          correlationId,
          body: decodeListFragmentsRequest(frame, requestHeaderBytes),
        };
      case ApiKey.MOVE:
        if (apiVersion !== 1) break;
        return { apiKey, apiVersion, correlationId, body: decodeMoveRequest(frame, requestHeaderBytes) };
      case ApiKey.REPLICATE:
        if (apiVersion !== 1) break;
        return {
          apiKey,
          apiVersion,
          correlationId,
          body: decodeReplicateRequest(frame, requestHeaderBytes),
        };
      default:
        return refuse(
          ErrorCode.UNSUPPORTED_VERSION,
          `apiKey: ${apiKey}, expected 1 (PRODUCE), 2 (FETCH), 3 (METADATA), 4 (APPLY), 5 (LIST), 6 (API_VERSIONS), 7 (LIST_FRAGMENTS), 8 (MOVE) or 9 (REPLICATE)`,
        );
    }
  } catch (error) {
    if (error instanceof ProduceDecodeError) {
      return refuse(ErrorCode.CORRUPT_REQUEST, error.message, error.ack === 0);
    }
    if (error instanceof DecodeError) return refuse(ErrorCode.CORRUPT_REQUEST, error.message);
    throw error;
  }
  return refuse(
    ErrorCode.UNSUPPORTED_VERSION,
    `apiVersion: ${apiVersion}, not a version of apiKey ${apiKey}`,
  );
}
