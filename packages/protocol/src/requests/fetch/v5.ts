/**
 * FETCH request v5 => topic:string partition:int32 fetchOffset:int64 maxBytes:int32
 *                     maxWaitMillis:int32 minBytes:int32 lastEpoch:int32
 * FETCH response v5 (success body) => highWatermark:int64 epoch:int32 epochEndOffset:int64
 *                                     payloadBytes:int32 payload:bytes
 * RECORDS_LOST (17) body => epoch:int32 endOffset:int64
 *
 * As v4 (routes followed, reads from in-sync replicas), with the partition's epochs, so that a
 * consumer notices when the records it read before its position are gone (Kafka's fetch with
 * lastFetchedEpoch, KIP-320/KIP-595). `lastEpoch` is the epoch of the last record the consumer read,
 * -1 when it knows none (nothing is checked then). If the log's epoch `lastEpoch` (or the latest one
 * before it) ends before fetchOffset, the answer is RECORDS_LOST with that epoch and its end: the
 * records the consumer read from there are lost. An answer's records from fetchOffset up to
 * epochEndOffset (all of them when it is -1) are of `epoch`; a consumer keeps those and fetches the
 * rest again, so that it always knows the epoch of what it read last.
 */
import { ApiKey } from '../../api.js';
import { DecodeError, fieldError, readOffset, WireReader } from '../../codec/reader.js';
import { WireWriter, writeInt64 } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { writeResponseHeader } from '../../frame/header.js';
import {
  fetchResponseV5FixedBytes,
  lengthPrefixBytes,
  requestHeaderBytes,
  responseHeaderBytes,
} from '../../limits.js';
import { type FetchRequest, fetchCommonBytes, writeFetchCommon } from './v1.js';
import { readFetchRequestV2 } from './v2.js';

/** lastEpoch of a consumer that knows no epoch (a new one, or one that moved its position). */
export const NO_EPOCH = -1;

/** The epoch fields of a v5 answer. */
export interface EpochSpan {
  /** The epoch of the record at fetchOffset. */
  epoch: number;
  /** Where a later epoch begins, past fetchOffset; -1 when `epoch` is the latest. */
  epochEndOffset: number;
}

/** A v5 request: v2's fields and the epoch of the last record read. */
export type FetchRequestV5 = FetchRequest & { lastEpoch: number };

export function decodeFetchRequestV5(frame: Buffer, payloadStart: number): FetchRequestV5 {
  const reader = new WireReader(frame, payloadStart);
  const common = readFetchRequestV2(reader);
  const lastEpoch = reader.int32('lastEpoch');
  if (lastEpoch < NO_EPOCH) throw fieldError('lastEpoch', lastEpoch, '>= -1');
  return { ...common, lastEpoch };
}

export function encodeFetchRequestV5(correlationId: number, req: FetchRequestV5): Buffer {
  const payloadBytes = fetchCommonBytes(req) + 12;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.FETCH)
    .int16(5)
    .int32(correlationId);
  writeFetchCommon(w, req);
  w.int32(req.maxWaitMs).int32(req.minBytes).int32(req.lastEpoch);
  return w.done();
}

/** v5's response frame up to the payload (see encodeFetchResponseHeader). */
export function encodeFetchResponseHeaderV5(
  correlationId: number,
  highWatermark: number,
  span: EpochSpan,
  payloadBytes: number,
): Buffer {
  const buf = Buffer.allocUnsafe(fetchResponseHeaderV5Bytes);
  const at = writeResponseHeader(
    buf,
    correlationId,
    ErrorCode.NONE,
    fetchResponseV5FixedBytes + payloadBytes,
  );
  writeInt64(buf, highWatermark, at);
  buf.writeInt32BE(span.epoch, at + 8);
  writeInt64(buf, span.epochEndOffset, at + 12);
  buf.writeInt32BE(payloadBytes, at + 20);
  return buf;
}

/** Length prefix + response header + v5's fields before the payload. */
export const fetchResponseHeaderV5Bytes = lengthPrefixBytes + responseHeaderBytes + fetchResponseV5FixedBytes;

export interface FetchResponseV5 extends EpochSpan {
  highWatermark: number;
  /** The stored-record bytes, a view into the frame; decode with `decodeFetchPayload`. */
  payload: Buffer;
}

export function decodeFetchResponseV5(body: Buffer): FetchResponseV5 {
  const reader = new WireReader(body);
  const highWatermark = readOffset(reader, 'highWatermark');
  const epoch = reader.int32('epoch');
  if (epoch < 0) throw fieldError('epoch', epoch, '>= 0');
  const epochEndOffset = reader.int64('epochEndOffset');
  if (epochEndOffset < -1) throw fieldError('epochEndOffset', epochEndOffset, '>= -1');
  const payloadBytes = reader.int32('payloadBytes');
  if (payloadBytes !== reader.remaining) {
    throw new DecodeError(`payloadBytes: ${payloadBytes}, but ${reader.remaining} bytes remain in the frame`);
  }
  return { highWatermark, epoch, epochEndOffset, payload: reader.bytes(payloadBytes, 'payload') };
}

/** The epoch a consumer read in, as the log knows it, and where it ends: the records from there are lost. */
export interface RecordsLost {
  epoch: number;
  endOffset: number;
}

export function encodeRecordsLostResponse(correlationId: number, lost: RecordsLost): Buffer {
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + 12);
  w.int32(responseHeaderBytes + 12)
    .int32(correlationId)
    .int16(ErrorCode.RECORDS_LOST);
  return w.int32(lost.epoch).int64(lost.endOffset).done();
}

export function decodeRecordsLost(body: Buffer): RecordsLost {
  const reader = new WireReader(body);
  const epoch = reader.int32('epoch');
  if (epoch < 0) throw fieldError('epoch', epoch, '>= 0');
  return { epoch, endOffset: readOffset(reader, 'endOffset') };
}
