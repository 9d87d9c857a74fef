import type { ApiKeyValue } from '../api.js';
import type { Capabilities } from '../api-table/capabilities.js';
import type { RequestBody } from '../api-table/rows.js';
import { apiRowOf, apiRows } from '../api-table/table.js';
import { DecodeError } from '../codec/reader.js';
import { ErrorCode, RequestError } from '../errors.js';
import { readRequestHeader } from '../frame/header.js';
import { requestHeaderBytes } from '../limits.js';
import { ProduceDecodeError } from './produce/v1.js';

/** A decoded request of one API, with what its version means (its row's capabilities). */
export type RequestOf<K extends ApiKeyValue> = {
  apiKey: K;
  apiVersion: number;
  correlationId: number;
  body: RequestBody<K>;
  capabilities: Capabilities;
};

/** A decoded request of any API: narrowed by `apiKey`. */
export type Request = { [K in ApiKeyValue]: RequestOf<K> }[ApiKeyValue];

/** "1 (PRODUCE), 2 (FETCH), ... or 9 (REPLICATE)": what an unknown apiKey is told to be. */
const knownKeys = (() => {
  const named = apiRows.map((r) => `${r.apiKey} (${r.name})`);
  return `${named.slice(0, -1).join(', ')} or ${named[named.length - 1]}`;
})();

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
  const row = apiRowOf(apiKey);
  if (row === undefined) {
    throw new RequestRefusal(
      ErrorCode.UNSUPPORTED_VERSION,
      `apiKey: ${apiKey}, expected ${knownKeys}`,
      correlationId,
      apiKey,
      false,
    );
  }
  const version = row.versions[apiVersion - 1];
  if (version === undefined) {
    throw new RequestRefusal(
      ErrorCode.UNSUPPORTED_VERSION,
      `apiVersion: ${apiVersion}, not a version of apiKey ${apiKey}`,
      correlationId,
      apiKey,
      false,
    );
  }
  let body: unknown;
  try {
    body = version.decode(frame, requestHeaderBytes);
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    // A PRODUCE with ack NONE is never answered, not even refused.
    const silent = error instanceof ProduceDecodeError && error.ack === 0;
    throw new RequestRefusal(ErrorCode.CORRUPT_REQUEST, error.message, correlationId, apiKey, silent);
  }
  // The row's decoder for this apiKey made `body`: the pairing Request states.
  return {
    apiKey: row.apiKey,
    apiVersion,
    correlationId,
    body,
    capabilities: version.capabilities,
  } as Request;
}
