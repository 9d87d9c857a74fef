/**
 * API_VERSIONS request v1 => (no fields)
 * API_VERSIONS response v1 (success body) => count:int32 [apiKey:int16 minVersion:int16 maxVersion:int16]*count
 *
 * How a client learns what a broker speaks. A broker that predates it answers UNSUPPORTED_VERSION:
 * it speaks PRODUCE v1, FETCH v1..2 and METADATA v1 (`apiVersionsBeforeDiscovery`).
 */
import { ApiKey, type ApiVersionRange } from '../../api.js';
import { readCount, WireReader } from '../../codec/reader.js';
import { WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';

export function encodeApiVersionsRequest(correlationId: number): Buffer {
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes);
  return w.int32(requestHeaderBytes).int16(ApiKey.API_VERSIONS).int16(1).int32(correlationId).done();
}

export function encodeApiVersionsResponse(correlationId: number, ranges: readonly ApiVersionRange[]): Buffer {
  const bodyBytes = 4 + ranges.length * 6;
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE)
    .int32(ranges.length);
  for (const r of ranges) w.int16(r.apiKey).int16(r.minVersion).int16(r.maxVersion);
  return w.done();
}

export function decodeApiVersionsResponse(body: Buffer): ApiVersionRange[] {
  const reader = new WireReader(body);
  const count = readCount(reader, 'count', 6);
  const ranges: ApiVersionRange[] = [];
  for (let i = 0; i < count; i++) {
    ranges.push({
      apiKey: reader.int16(`apis[${i}].apiKey`),
      minVersion: reader.int16(`apis[${i}].minVersion`),
      maxVersion: reader.int16(`apis[${i}].maxVersion`),
    });
  }
  return ranges;
}
