/**
 * METADATA request v3 => topicCount:int32 topic:string * topicCount minRevision:int64 flags:int8
 * METADATA response v3 (success body) => as v2
 * METADATA response v3 with LOCAL (success body) => revision:int64 then v1's body (no routes)
 *
 * What differs from v2: the broker answers once its copy of the topic specs has reached
 * `minRevision` (the revision an APPLY returned; 0: at once), so a topic just created through one
 * broker is seen through any other; and `flags` bit 0 (LOCAL) asks only for the partitions whose
 * primary is the answering broker (what one broker asks another; a client sends 0). Every route of
 * such an answer would be the answering broker, so it carries none: v1's fixed-size entries.
 */
import { ApiKey } from '../../api.js';
import { fieldError, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import {
  decodeMetadataRequest,
  type MetadataRequest,
  metadataTopicsBytes,
  readMetadataTopics,
  type TopicMetadata,
  writeMetadataTopics,
} from './v1.js';

export { decodeMetadataResponseV2 as decodeMetadataResponseV3 } from './v2.js';

export const MetadataFlag = {
  /** Only the partitions this broker is the primary of. */
  LOCAL: 1,
} as const;

export interface MetadataRequestV3 extends MetadataRequest {
  /** 0: answer at once. */
  minRevision: number;
  flags: number;
}

export function decodeMetadataRequestV3(frame: Buffer, payloadStart: number): MetadataRequestV3 {
  // The topic list is v1's; the two fields after it are the last 9 bytes of the frame.
  if (frame.length - payloadStart < 4 + 9) {
    throw fieldError('frame', frame.length - payloadStart, 'at least 13 bytes of payload');
  }
  const tail = frame.length - 9;
  const { topics } = decodeMetadataRequest(frame.subarray(0, tail), payloadStart);
  const reader = new WireReader(frame, tail);
  const minRevision = reader.int64('minRevision');
  if (minRevision < 0) throw fieldError('minRevision', minRevision, '>= 0');
  const flags = reader.int8('flags');
  if ((flags & ~MetadataFlag.LOCAL) !== 0) throw fieldError('flags', flags, 'only bit 0 (LOCAL)');
  return { topics, minRevision, flags };
}

export function encodeMetadataRequestV3(correlationId: number, req: MetadataRequestV3): Buffer {
  let payloadBytes = 4 + 9;
  for (const t of req.topics) payloadBytes += stringBytes(t);
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.METADATA)
    .int16(3)
    .int32(correlationId);
  w.int32(req.topics.length);
  for (const t of req.topics) w.string(t);
  w.int64(req.minRevision).int8(req.flags);
  return w.done();
}

export interface MetadataResponseLocal {
  revision: number;
  topics: TopicMetadata[];
}

export function encodeMetadataResponseLocal(correlationId: number, res: MetadataResponseLocal): Buffer {
  const bodyBytes = 8 + metadataTopicsBytes(res.topics);
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  w.int64(res.revision);
  writeMetadataTopics(w, res.topics);
  return w.done();
}

export function decodeMetadataResponseLocal(body: Buffer): MetadataResponseLocal {
  const reader = new WireReader(body);
  const revision = reader.int64('revision');
  return { revision, topics: readMetadataTopics(reader) };
}
