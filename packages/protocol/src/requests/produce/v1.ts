/**
 * PRODUCE request v1 => topic:string partition:int32 ackPolicy:int8 recordCount:int32
 *                       [size:int32 payload:bytes] * recordCount
 * PRODUCE response v1 (success body) => baseOffset:int64 logEndOffset:int64
 */
import { type AckPolicyValue, ApiKey } from '../../api.js';
import { DecodeError, fieldError, readOffset, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter, writeInt64 } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { writeResponseHeader } from '../../frame/header.js';
import { lengthPrefixBytes, produceResponseBodyBytes, requestHeaderBytes } from '../../limits.js';
import { checkTopicName, readTopicBytes } from '../topic-field.js';

export interface ProduceRequest {
  topic: string;
  partition: number;
  ack: AckPolicyValue;
  recordCount: number;
  /**
   * The records exactly as on the wire (`int32 size, payload` each), validated: every size > 0 and
   * inside the frame. A view into the frame; the log turns it into stored records without parsing twice.
   */
  records: Buffer;
  /** PRODUCE v2: the offset the batch must land at, or -1 (always -1 for v1). */
  expectedOffset: number;
}

/** No expected offset: the batch lands wherever the log ends (v1, and v2 with -1). */
export const EXPECTED_OFFSET_NONE = -1;

export interface ProduceResult {
  baseOffset: number;
  logEndOffset: number;
}

/** A PRODUCE that does not decode. Carries the ack policy when it was read, so NONE stays unanswered. */
export class ProduceDecodeError extends DecodeError {
  constructor(
    message: string,
    readonly ack: AckPolicyValue | undefined,
  ) {
    super(message);
  }
}

export function decodeProduceRequest(frame: Buffer, payloadStart: number): ProduceRequest {
  return decodeProduceFields(frame, payloadStart, false);
}

/** v1's fields, and for v2 `expectedOffset` between ackPolicy and recordCount. */
export function decodeProduceFields(
  frame: Buffer,
  payloadStart: number,
  hasExpectedOffset: boolean,
): ProduceRequest {
  const reader = new WireReader(frame, payloadStart);
  // Topic, partition and ack are read before any rule is checked: the ack decides whether a refusal
  // may be answered at all.
  const topicBytes = readTopicBytes(reader);
  let ack: AckPolicyValue | undefined;
  const fail = (error: DecodeError): never => {
    throw new ProduceDecodeError(error.message, ack);
  };
  try {
    const partition = reader.int32('partition');
    const ackByte = reader.int8('ackPolicy');
    if (ackByte >= 0 && ackByte <= 2) ack = ackByte as AckPolicyValue;
    const topic = checkTopicName(topicBytes);
    if (partition < 0) fail(fieldError('partition', partition, '>= 0'));
    if (ack === undefined) fail(fieldError('ackPolicy', ackByte, '0 (NONE), 1 (WRITTEN) or 2 (FORCED)'));
    let expectedOffset = EXPECTED_OFFSET_NONE;
    if (hasExpectedOffset) {
      expectedOffset = reader.int64('expectedOffset');
      if (expectedOffset < EXPECTED_OFFSET_NONE || expectedOffset > Number.MAX_SAFE_INTEGER) {
        fail(fieldError('expectedOffset', expectedOffset, '-1 (none) or 0..2^53-1'));
      }
    }
    const recordCount = reader.int32('recordCount');
    if (recordCount <= 0) fail(fieldError('recordCount', recordCount, '> 0'));
    if (recordCount * 4 > reader.remaining) {
      fail(
        fieldError('recordCount', recordCount, `at most ${Math.floor(reader.remaining / 4)} in this frame`),
      );
    }
    const start = reader.offset;
    const buf = reader.buf;
    let pos = start;
    for (let i = 0; i < recordCount; i++) {
      if (reader.end - pos < 4) fail(new DecodeError(`records[${i}].size: runs past the end of the frame`));
      const size = buf.readInt32BE(pos);
      if (size <= 0) fail(fieldError(`records[${i}].size`, size, '> 0'));
      if (size > reader.end - pos - 4) {
        fail(fieldError(`records[${i}].size`, size, `at most ${reader.end - pos - 4} left in the frame`));
      }
      pos += 4 + size;
    }
    return {
      topic,
      partition,
      ack: ack as AckPolicyValue,
      recordCount,
      records: buf.subarray(start, pos),
      expectedOffset,
    };
  } catch (error) {
    if (error instanceof ProduceDecodeError) throw error;
    if (error instanceof DecodeError) return fail(error);
    throw error;
  }
}

export interface ProduceRequestInput {
  topic: string;
  partition: number;
  ack: AckPolicyValue;
  records: readonly Uint8Array[];
}

/** A whole PRODUCE v1 frame, length prefix included. */
export function encodeProduceRequest(correlationId: number, req: ProduceRequestInput): Buffer {
  let recordBytes = 0;
  for (const r of req.records) recordBytes += 4 + r.length;
  const payloadBytes = stringBytes(req.topic) + 4 + 1 + 4 + recordBytes;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.PRODUCE)
    .int16(1)
    .int32(correlationId);
  w.string(req.topic).int32(req.partition).int8(req.ack).int32(req.records.length);
  for (const r of req.records) w.int32(r.length).bytes(r);
  return w.done();
}

/** Splits the wire records of a decoded request into payload views (for tests and tools, not the hot path). */
export function produceRecordPayloads(req: Pick<ProduceRequest, 'records' | 'recordCount'>): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  for (let i = 0; i < req.recordCount; i++) {
    const size = req.records.readInt32BE(pos);
    out.push(req.records.subarray(pos + 4, pos + 4 + size));
    pos += 4 + size;
  }
  return out;
}

export function encodeProduceResponse(correlationId: number, result: ProduceResult): Buffer {
  const buf = Buffer.allocUnsafe(lengthPrefixBytes + 6 + produceResponseBodyBytes);
  const at = writeResponseHeader(buf, correlationId, ErrorCode.NONE, produceResponseBodyBytes);
  writeInt64(buf, result.baseOffset, at);
  writeInt64(buf, result.logEndOffset, at + 8);
  return buf;
}

export function decodeProduceResponse(body: Buffer): ProduceResult {
  const reader = new WireReader(body);
  return {
    baseOffset: readOffset(reader, 'baseOffset'),
    logEndOffset: readOffset(reader, 'logEndOffset'),
  };
}
