/**
 * REPLICATE request v1  => topic:string partition:int32 epoch:int32 recordsEpoch:int32
 *                          baseOffset:int64 prevEpoch:int32 commitOffset:int64 flags:int8
 *                          count:int32 stored:int32-length bytes
 * REPLICATE response v1 => logEndOffset:int64 lastEpoch:int32 knownEpoch:int32
 *   (the body follows NONE, OFFSET_MISMATCH and STALE_EPOCH; other codes have none)
 *
 * Broker to broker: a partition's primary streams each write group to a replica, and copies what a
 * replica lacks with the same request. `stored` is records as on disk (`size, crc, payload` each), so
 * the replica writes the primary's bytes at the primary's offsets after checking every CRC.
 *
 * - `epoch` is the sender's primary epoch: a replica that knows a later one answers STALE_EPOCH, so an
 *   old primary paused or cut off can never have a write acknowledged.
 * - `recordsEpoch` is the epoch the records were first written in (a copy of old records keeps theirs).
 * - `baseOffset` and `prevEpoch` (the epoch of the record before `baseOffset` on the primary) must
 *   match the replica's log end and its epoch there; otherwise OFFSET_MISMATCH, with the replica's end
 *   and last epoch so the primary can tell where the two logs diverged.
 * - `commitOffset`: what every in-sync replica holds; the replica serves nothing beyond it.
 * - flags bit 0 FORCED: answer after an fdatasync; bit 1 TRUNCATE: cut the log back to `baseOffset`
 *   (records past the point where it diverged from this primary), no records.
 *   A request with no records is a heartbeat carrying the commit offset.
 */
import { ApiKey } from '../../api.js';
import { fieldError, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { checkTopicName, readTopicBytes } from '../topic-field.js';

export const ReplicateFlag = {
  FORCED: 1,
  TRUNCATE: 2,
} as const;

export interface ReplicateRequest {
  topic: string;
  partition: number;
  epoch: number;
  recordsEpoch: number;
  baseOffset: number;
  prevEpoch: number;
  commitOffset: number;
  flags: number;
  count: number;
  /** A view into the request frame: copy it if it must outlive the handler. */
  stored: Buffer;
}

export interface ReplicateAnswer {
  code: number;
  logEndOffset: number;
  lastEpoch: number;
  knownEpoch: number;
}

/** The fields before the stored bytes, after the topic. */
const FIXED_BYTES = 4 + 4 + 4 + 8 + 4 + 8 + 1 + 4 + 4;
const ANSWER_BODY_BYTES = 8 + 4 + 4;

export function decodeReplicateRequest(frame: Buffer, payloadStart: number): ReplicateRequest {
  const reader = new WireReader(frame, payloadStart);
  const topic = checkTopicName(readTopicBytes(reader), 'topic');
  const partition = reader.int32('partition');
  if (partition < 0) throw fieldError('partition', partition, '>= 0');
  const epoch = nonNegative(reader.int32('epoch'), 'epoch');
  const recordsEpoch = nonNegative(reader.int32('recordsEpoch'), 'recordsEpoch');
  const baseOffset = nonNegative(reader.int64('baseOffset'), 'baseOffset');
  const prevEpoch = nonNegative(reader.int32('prevEpoch'), 'prevEpoch');
  const commitOffset = nonNegative(reader.int64('commitOffset'), 'commitOffset');
  const flags = reader.int8('flags');
  if ((flags & ~(ReplicateFlag.FORCED | ReplicateFlag.TRUNCATE)) !== 0)
    throw fieldError('flags', flags, 'only bits 0 (FORCED) and 1 (TRUNCATE)');
  const count = nonNegative(reader.int32('count'), 'count');
  const length = nonNegative(reader.int32('stored'), 'stored length');
  if (length !== reader.remaining)
    throw fieldError('stored length', length, `${reader.remaining} (the rest of the frame)`);
  if ((flags & ReplicateFlag.TRUNCATE) !== 0 && count !== 0)
    throw fieldError('count', count, '0 with TRUNCATE');
  const stored = frame.subarray(reader.offset, reader.offset + length);
  return { topic, partition, epoch, recordsEpoch, baseOffset, prevEpoch, commitOffset, flags, count, stored };
}

/**
 * The request as pieces to write back to back (header, then the stored bytes as they are): the
 * group's bytes are never copied into a request buffer.
 */
export function encodeReplicateRequest(correlationId: number, req: ReplicateRequest): Buffer[] {
  const headBytes = stringBytes(req.topic) + FIXED_BYTES;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + headBytes);
  w.int32(requestHeaderBytes + headBytes + req.stored.length)
    .int16(ApiKey.REPLICATE)
    .int16(1)
    .int32(correlationId);
  w.string(req.topic)
    .int32(req.partition)
    .int32(req.epoch)
    .int32(req.recordsEpoch)
    .int64(req.baseOffset)
    .int32(req.prevEpoch)
    .int64(req.commitOffset)
    .int8(req.flags)
    .int32(req.count)
    .int32(req.stored.length);
  const head = w.done();
  return req.stored.length === 0 ? [head] : [head, req.stored];
}

export function encodeReplicateResponse(correlationId: number, answer: ReplicateAnswer): Buffer {
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + ANSWER_BODY_BYTES);
  w.int32(responseHeaderBytes + ANSWER_BODY_BYTES)
    .int32(correlationId)
    .int16(answer.code);
  return w.int64(answer.logEndOffset).int32(answer.lastEpoch).int32(answer.knownEpoch).done();
}

/** The answer's fields from its code and body; a code without a body gives -1 for each field. */
export function decodeReplicateResponse(code: number, body: Buffer): ReplicateAnswer {
  if (code !== ErrorCode.NONE && code !== ErrorCode.OFFSET_MISMATCH && code !== ErrorCode.STALE_EPOCH) {
    return { code, logEndOffset: -1, lastEpoch: -1, knownEpoch: -1 };
  }
  const reader = new WireReader(body);
  return {
    code,
    logEndOffset: nonNegative(reader.int64('logEndOffset'), 'logEndOffset'),
    lastEpoch: nonNegative(reader.int32('lastEpoch'), 'lastEpoch'),
    knownEpoch: nonNegative(reader.int32('knownEpoch'), 'knownEpoch'),
  };
}

function nonNegative(value: number, field: string): number {
  if (value < 0) throw fieldError(field, value, '>= 0');
  return value;
}
