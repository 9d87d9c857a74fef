/**
 * PRODUCE request v2 => topic:string partition:int32 ackPolicy:int8 expectedOffset:int64
 *                       recordCount:int32 [size:int32 payload:bytes] * recordCount
 * PRODUCE response v2 (success body) => baseOffset:int64 logEndOffset:int64   (as v1)
 * OFFSET_MISMATCH error body => logEndOffset:int64
 *
 * Only `expectedOffset` differs from v1: -1 lands anywhere, N >= 0 only at offset N (the partition's
 * end when the batch is written), else OFFSET_MISMATCH and nothing is written.
 */
import { ApiKey } from '../../api.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { lengthPrefixBytes, requestHeaderBytes } from '../../limits.js';
import {
  decodeProduceFields,
  EXPECTED_OFFSET_NONE,
  type ProduceRequest,
  type ProduceRequestInput,
} from './v1.js';

export function decodeProduceRequestV2(frame: Buffer, payloadStart: number): ProduceRequest {
  return decodeProduceFields(frame, payloadStart, true);
}

export interface ProduceRequestInputV2 extends ProduceRequestInput {
  /** -1 (or absent): no expectation. */
  expectedOffset?: number;
}

/** A whole PRODUCE v2 frame, length prefix included. */
export function encodeProduceRequestV2(correlationId: number, req: ProduceRequestInputV2): Buffer {
  let recordBytes = 0;
  for (const r of req.records) recordBytes += 4 + r.length;
  const payloadBytes = stringBytes(req.topic) + 4 + 1 + 8 + 4 + recordBytes;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.PRODUCE)
    .int16(2)
    .int32(correlationId);
  w.string(req.topic)
    .int32(req.partition)
    .int8(req.ack)
    .int64(req.expectedOffset ?? EXPECTED_OFFSET_NONE)
    .int32(req.records.length);
  for (const r of req.records) w.int32(r.length).bytes(r);
  return w.done();
}
