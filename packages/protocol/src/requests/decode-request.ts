import { ApiKey } from '../api.js';
import { DecodeError } from '../codec/reader.js';
import { ErrorCode, RequestError } from '../errors.js';
import { readRequestHeader } from '../frame/header.js';
import { requestHeaderBytes } from '../limits.js';
import { decodeFetchRequestV1, type FetchRequest } from './fetch/v1.js';
import { decodeFetchRequestV2 } from './fetch/v2.js';
import { decodeMetadataRequest, type MetadataRequest } from './metadata/v1.js';
import { decodeProduceRequest, ProduceDecodeError, type ProduceRequest } from './produce/v1.js';

export type Request =
  | { apiKey: typeof ApiKey.PRODUCE; apiVersion: number; correlationId: number; body: ProduceRequest }
  | { apiKey: typeof ApiKey.FETCH; apiVersion: number; correlationId: number; body: FetchRequest }
  | { apiKey: typeof ApiKey.METADATA; apiVersion: number; correlationId: number; body: MetadataRequest };

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
        if (apiVersion !== 1) break;
        return { apiKey, apiVersion, correlationId, body: decodeProduceRequest(frame, requestHeaderBytes) };
      case ApiKey.FETCH:
        if (apiVersion === 1) {
          return { apiKey, apiVersion, correlationId, body: decodeFetchRequestV1(frame, requestHeaderBytes) };
        }
        if (apiVersion === 2) {
          return { apiKey, apiVersion, correlationId, body: decodeFetchRequestV2(frame, requestHeaderBytes) };
        }
        break;
      case ApiKey.METADATA:
        if (apiVersion !== 1) break;
        return { apiKey, apiVersion, correlationId, body: decodeMetadataRequest(frame, requestHeaderBytes) };
      default:
        return refuse(
          ErrorCode.UNSUPPORTED_VERSION,
          `apiKey: ${apiKey}, expected 1 (PRODUCE), 2 (FETCH) or 3 (METADATA)`,
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
