/**
 * LIST_FRAGMENTS request v1 => topic:string partition:int32
 * LIST_FRAGMENTS response v1 (success body) => partitionCount:int32
 *   [partition:int32 logStartOffset:int64 highWatermark:int64 fragmentCount:int32
 *     [baseOffset:int64 endOffset:int64 sizeBytes:int64 location:int8 persistedMillis:int64]*fragmentCount
 *   ]*partitionCount
 * Error body: none (UNKNOWN_TOPIC_OR_PARTITION: the topic, or that partition, is not served here)
 *
 * Where each segment of a partition's history is: on this broker's disk, in the topic's store, or
 * both; `partition` -1 asks for every partition. `endOffset` is one past the segment's last offset;
 * the last segment of a partition is the active one (still growing). `persistedMillis` is when the
 * upload completed (ms since the epoch), -1 for a segment not in the store.
 */
import { ApiKey } from '../../api.js';
import { fieldError, readCount, readOffset, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { checkTopicName, readTopicBytes } from '../topic-field.js';

/** `partition` that asks for every partition of the topic. */
export const ALL_PARTITIONS = -1;

export const FragmentLocation = {
  LOCAL: 1,
  STORE: 2,
  BOTH: 3,
} as const;

export type FragmentLocationValue = (typeof FragmentLocation)[keyof typeof FragmentLocation];

export interface ListFragmentsRequest {
  topic: string;
  /** A partition id, or ALL_PARTITIONS. */
  partition: number;
}

export interface ListedFragment {
  baseOffset: number;
  endOffset: number;
  sizeBytes: number;
  location: FragmentLocationValue;
  /** -1: not persisted. */
  persistedMs: number;
}

export interface PartitionFragments {
  partition: number;
  logStartOffset: number;
  highWatermark: number;
  fragments: ListedFragment[];
}

const FRAGMENT_BYTES = 8 + 8 + 8 + 1 + 8;
const PARTITION_HEAD_BYTES = 4 + 8 + 8 + 4;

export function encodeListFragmentsRequest(correlationId: number, req: ListFragmentsRequest): Buffer {
  const payloadBytes = stringBytes(req.topic) + 4;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.LIST_FRAGMENTS)
    .int16(1)
    .int32(correlationId);
  w.string(req.topic).int32(req.partition);
  return w.done();
}

export function decodeListFragmentsRequest(frame: Buffer, payloadStart: number): ListFragmentsRequest {
  const reader = new WireReader(frame, payloadStart);
  const topic = checkTopicName(readTopicBytes(reader));
  const partition = reader.int32('partition');
  if (partition < ALL_PARTITIONS) throw fieldError('partition', partition, '>= 0, or -1 (every partition)');
  return { topic, partition };
}

export function encodeListFragmentsResponse(
  correlationId: number,
  partitions: readonly PartitionFragments[],
): Buffer {
  let bodyBytes = 4;
  for (const p of partitions) bodyBytes += PARTITION_HEAD_BYTES + p.fragments.length * FRAGMENT_BYTES;
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE)
    .int32(partitions.length);
  for (const p of partitions) {
    w.int32(p.partition).int64(p.logStartOffset).int64(p.highWatermark).int32(p.fragments.length);
    for (const f of p.fragments) {
      w.int64(f.baseOffset).int64(f.endOffset).int64(f.sizeBytes).int8(f.location).int64(f.persistedMs);
    }
  }
  return w.done();
}

export function decodeListFragmentsResponse(body: Buffer): PartitionFragments[] {
  const reader = new WireReader(body);
  const count = readCount(reader, 'partitionCount', PARTITION_HEAD_BYTES);
  const partitions: PartitionFragments[] = [];
  for (let i = 0; i < count; i++) {
    const at = `partitions[${i}]`;
    const partition = reader.int32(`${at}.partition`);
    if (partition < 0) throw fieldError(`${at}.partition`, partition, '>= 0');
    const logStartOffset = readOffset(reader, `${at}.logStartOffset`);
    const highWatermark = readOffset(reader, `${at}.highWatermark`);
    const n = readCount(reader, `${at}.fragmentCount`, FRAGMENT_BYTES);
    const fragments: ListedFragment[] = [];
    for (let k = 0; k < n; k++) {
      const f = `${at}.fragments[${k}]`;
      const baseOffset = readOffset(reader, `${f}.baseOffset`);
      const endOffset = readOffset(reader, `${f}.endOffset`);
      if (endOffset < baseOffset)
        throw fieldError(`${f}.endOffset`, endOffset, `>= baseOffset (${baseOffset})`);
      const sizeBytes = readOffset(reader, `${f}.sizeBytes`);
      const location = reader.int8(`${f}.location`);
      if (location < FragmentLocation.LOCAL || location > FragmentLocation.BOTH) {
        throw fieldError(`${f}.location`, location, '1 (local), 2 (store) or 3 (both)');
      }
      const persistedMs = reader.int64(`${f}.persistedMillis`);
      if (persistedMs < -1) throw fieldError(`${f}.persistedMillis`, persistedMs, '>= -1');
      fragments.push({
        baseOffset,
        endOffset,
        sizeBytes,
        location: location as FragmentLocationValue,
        persistedMs,
      });
    }
    partitions.push({ partition, logStartOffset, highWatermark, fragments });
  }
  return partitions;
}
