/**
 * FETCH request v2 => topic:string partition:int32 fetchOffset:int64 maxBytes:int32
 *                     maxWaitMillis:int32 minBytes:int32
 * Only the request differs from v1: a long-poll wait and a minimum to wait for.
 */
import { ApiKey } from '../../api.js';
import { fieldError, WireReader } from '../../codec/reader.js';
import { WireWriter } from '../../codec/writer.js';
import { lengthPrefixBytes, requestHeaderBytes } from '../../limits.js';
import { decodeFetchCommon, type FetchRequest, fetchCommonBytes, writeFetchCommon } from './v1.js';

export function decodeFetchRequestV2(frame: Buffer, payloadStart: number): FetchRequest {
  return readFetchRequestV2(new WireReader(frame, payloadStart));
}

/** v2's fields from `reader` (a later version reads its own after them). */
export function readFetchRequestV2(reader: WireReader): FetchRequest {
  const common = decodeFetchCommon(reader);
  const maxWaitMs = reader.int32('maxWaitMillis');
  if (maxWaitMs < 0) throw fieldError('maxWaitMillis', maxWaitMs, '>= 0');
  const minBytes = reader.int32('minBytes');
  if (minBytes < 0) throw fieldError('minBytes', minBytes, '>= 0');
  if (minBytes > common.maxBytes) throw fieldError('minBytes', minBytes, `<= maxBytes (${common.maxBytes})`);
  return { ...common, maxWaitMs, minBytes };
}

export function encodeFetchRequestV2(correlationId: number, req: FetchRequest): Buffer {
  const payloadBytes = fetchCommonBytes(req) + 8;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.FETCH)
    .int16(2)
    .int32(correlationId);
  writeFetchCommon(w, req);
  w.int32(req.maxWaitMs).int32(req.minBytes);
  return w.done();
}
