/**
 * FETCH request v1 => topic:string partition:int32 fetchOffset:int64 maxBytes:int32
 * FETCH response v1 and v2 (success body) => highWatermark:int64 payloadBytes:int32 payload:bytes
 *   payload => stored records byte for byte: [size:int32 crc32c:uint32 payload:bytes]..., cut anywhere
 */
import { ApiKey } from '../../api.js';
import { DecodeError, fieldError, readOffset, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter, writeInt64 } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { writeResponseHeader } from '../../frame/header.js';
import {
  fetchResponseFixedBytes,
  lengthPrefixBytes,
  requestHeaderBytes,
  responseHeaderBytes,
} from '../../limits.js';
import { checkTopicName, readTopicBytes } from '../topic-field.js';

export interface FetchRequest {
  topic: string;
  partition: number;
  fetchOffset: number;
  maxBytes: number;
  /** 0 answers at once (always 0 for v1). */
  maxWaitMs: number;
  /** 0 and 1 both mean "anything" (always 0 for v1). */
  minBytes: number;
  /** FETCH v5 only: the epoch of the last record the consumer read (-1: none known). */
  lastEpoch?: number;
}

/** Reads the fields v1 and v2 share, validating each in the spec's order. */
export function decodeFetchCommon(reader: WireReader): Omit<FetchRequest, 'maxWaitMs' | 'minBytes'> {
  const topic = checkTopicName(readTopicBytes(reader));
  const partition = reader.int32('partition');
  if (partition < 0) throw fieldError('partition', partition, '>= 0');
  const fetchOffset = reader.int64('fetchOffset');
  if (fetchOffset < 0) throw fieldError('fetchOffset', fetchOffset, '>= 0');
  const maxBytes = reader.int32('maxBytes');
  if (maxBytes <= 0) throw fieldError('maxBytes', maxBytes, '> 0');
  return { topic, partition, fetchOffset, maxBytes };
}

export function decodeFetchRequestV1(frame: Buffer, payloadStart: number): FetchRequest {
  return { ...decodeFetchCommon(new WireReader(frame, payloadStart)), maxWaitMs: 0, minBytes: 0 };
}

/** Bytes of the fields v1 and v2 share. */
export function fetchCommonBytes(req: Pick<FetchRequest, 'topic'>): number {
  return stringBytes(req.topic) + 4 + 8 + 4;
}

export function writeFetchCommon(w: WireWriter, req: FetchRequest): void {
  w.string(req.topic).int32(req.partition).int64(req.fetchOffset).int32(req.maxBytes);
}

export function encodeFetchRequestV1(correlationId: number, req: FetchRequest): Buffer {
  const payloadBytes = fetchCommonBytes(req);
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.FETCH)
    .int16(1)
    .int32(correlationId);
  writeFetchCommon(w, req);
  return w.done();
}

/**
 * The response frame up to the payload: length prefix, correlationId, errorCode, highWatermark and
 * payloadBytes. The broker writes the payload after it straight from the segment, never copying it in.
 */
export function encodeFetchResponseHeader(
  correlationId: number,
  highWatermark: number,
  payloadBytes: number,
): Buffer {
  const buf = Buffer.allocUnsafe(fetchResponseHeaderBytes);
  const at = writeResponseHeader(buf, correlationId, ErrorCode.NONE, fetchResponseFixedBytes + payloadBytes);
  writeInt64(buf, highWatermark, at);
  buf.writeInt32BE(payloadBytes, at + 8);
  return buf;
}

/** Length prefix + response header + highWatermark + payloadBytes. */
export const fetchResponseHeaderBytes = lengthPrefixBytes + responseHeaderBytes + fetchResponseFixedBytes;

export interface FetchResponse {
  highWatermark: number;
  /** The stored-record bytes, a view into the frame; decode with `decodeFetchPayload`. */
  payload: Buffer;
}

export function decodeFetchResponse(body: Buffer): FetchResponse {
  const reader = new WireReader(body);
  const highWatermark = readOffset(reader, 'highWatermark');
  const payloadBytes = reader.int32('payloadBytes');
  // The payload must be exactly what remains: a mismatch means the frame and its contents disagree.
  if (payloadBytes !== reader.remaining) {
    throw new DecodeError(`payloadBytes: ${payloadBytes}, but ${reader.remaining} bytes remain in the frame`);
  }
  return { highWatermark, payload: reader.bytes(payloadBytes, 'payload') };
}
