/**
 * METADATA request v1 => topicCount:int32 topic:string * topicCount   (0 asks for every topic)
 * METADATA response v1 (success body) => topicCount:int32
 *   [name:string partitionCount:int32 [partition:int32 logStartOffset:int64 highWatermark:int64]*]*
 */
import { ApiKey } from '../../api.js';
import { DecodeError, fieldError, readCount, readOffset, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { checkTopicName, readTopicBytes } from '../topic-field.js';

export interface MetadataRequest {
  /** Empty asks for every topic. As sent: duplicates are the broker's to collapse. */
  topics: string[];
}

export interface PartitionMetadata {
  partition: number;
  logStartOffset: number;
  highWatermark: number;
}

export interface TopicMetadata {
  name: string;
  partitions: PartitionMetadata[];
}

export function decodeMetadataRequest(frame: Buffer, payloadStart: number): MetadataRequest {
  const reader = new WireReader(frame, payloadStart);
  const topicCount = reader.int32('topicCount');
  if (topicCount < 0) throw fieldError('topicCount', topicCount, '>= 0');
  // Each name takes at least its 2-byte length: cap the count before trusting it.
  if (topicCount * 2 > reader.remaining) {
    throw fieldError('topicCount', topicCount, `at most ${Math.floor(reader.remaining / 2)} in this frame`);
  }
  const topics: string[] = [];
  for (let i = 0; i < topicCount; i++) topics.push(checkTopicName(readTopicBytes(reader), `topics[${i}]`));
  return { topics };
}

export function encodeMetadataRequest(correlationId: number, req: MetadataRequest): Buffer {
  let payloadBytes = 4;
  for (const t of req.topics) payloadBytes += stringBytes(t);
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.METADATA)
    .int16(1)
    .int32(correlationId);
  w.int32(req.topics.length);
  for (const t of req.topics) w.string(t);
  return w.done();
}

export function encodeMetadataResponse(correlationId: number, topics: readonly TopicMetadata[]): Buffer {
  const bodyBytes = metadataTopicsBytes(topics);
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  writeMetadataTopics(w, topics);
  return w.done();
}

/** The bytes of v1's answer body (also the tail of a METADATA v3 LOCAL answer). */
export function metadataTopicsBytes(topics: readonly TopicMetadata[]): number {
  let bytes = 4;
  for (const t of topics) bytes += stringBytes(t.name) + 4 + t.partitions.length * 20;
  return bytes;
}

export function writeMetadataTopics(w: WireWriter, topics: readonly TopicMetadata[]): void {
  w.int32(topics.length);
  for (const t of topics) {
    w.string(t.name).int32(t.partitions.length);
    for (const p of t.partitions) w.int32(p.partition).int64(p.logStartOffset).int64(p.highWatermark);
  }
}

export function decodeMetadataResponse(body: Buffer): TopicMetadata[] {
  return readMetadataTopics(new WireReader(body));
}

export function readMetadataTopics(reader: WireReader): TopicMetadata[] {
  const topicCount = readCount(reader, 'topicCount', 6);
  const topics: TopicMetadata[] = [];
  for (let i = 0; i < topicCount; i++) {
    const name = reader.string(`topics[${i}].name`);
    const partitionCount = readCount(reader, `topics[${i}].partitionCount`, 20);
    const partitions: PartitionMetadata[] = [];
    let j = 0;
    try {
      // Field names are built only on failure: an answer holds thousands of partitions.
      for (; j < partitionCount; j++) {
        partitions.push({
          partition: reader.int32('partition'),
          logStartOffset: readOffset(reader, 'logStartOffset'),
          highWatermark: readOffset(reader, 'highWatermark'),
        });
      }
    } catch (error) {
      if (error instanceof DecodeError)
        throw new DecodeError(`topics[${i}].partitions[${j}].${error.message}`);
      throw error;
    }
    topics.push({ name, partitions });
  }
  return topics;
}
