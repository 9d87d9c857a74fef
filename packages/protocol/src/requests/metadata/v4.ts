/**
 * METADATA request v4 => as v3 (topicCount:int32 topic:string*topicCount minRevision:int64 flags:int8)
 * METADATA response v4 (success body) => revision:int64 topicCount:int32
 *   [name:string partitionCount:int32
 *     [partition:int32 logStartOffset:int64 highWatermark:int64 route:RouteV2]*partitionCount]*topicCount
 *
 * What differs from v3: each route is a RouteV2 (the epoch, every replica with its zone, whether it is
 * in sync, and its lag), and a LOCAL answer has the same shape (the lag is known only to the primary,
 * so one broker asks it of another this way).
 */
import { readCount, readOffset, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { setRequestVersion } from '../../frame/header.js';
import { lengthPrefixBytes, responseHeaderBytes } from '../../limits.js';
import { type RouteV2, readRouteV2, routeV2Bytes, writeRouteV2 } from '../../topics/route-v2.js';
import type { PartitionMetadata } from './v1.js';
import { encodeMetadataRequestV3, type MetadataRequestV3 } from './v3.js';

export { decodeMetadataRequestV3 as decodeMetadataRequestV4 } from './v3.js';

export interface PartitionMetadataV4 extends PartitionMetadata {
  route: RouteV2;
}

export interface TopicMetadataV4 {
  name: string;
  partitions: PartitionMetadataV4[];
}

export interface MetadataResponseV4 {
  revision: number;
  topics: TopicMetadataV4[];
}

export function encodeMetadataRequestV4(correlationId: number, req: MetadataRequestV3): Buffer {
  return setRequestVersion(encodeMetadataRequestV3(correlationId, req), 4);
}

export function encodeMetadataResponseV4(correlationId: number, res: MetadataResponseV4): Buffer {
  let bodyBytes = 8 + 4;
  for (const t of res.topics) {
    bodyBytes += stringBytes(t.name) + 4;
    for (const p of t.partitions) bodyBytes += 20 + routeV2Bytes(p.route);
  }
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  w.int64(res.revision).int32(res.topics.length);
  for (const t of res.topics) {
    w.string(t.name).int32(t.partitions.length);
    for (const p of t.partitions) {
      w.int32(p.partition).int64(p.logStartOffset).int64(p.highWatermark);
      writeRouteV2(w, p.route);
    }
  }
  return w.done();
}

export function decodeMetadataResponseV4(body: Buffer): MetadataResponseV4 {
  const reader = new WireReader(body);
  const revision = reader.int64('revision');
  const topicCount = readCount(reader, 'topicCount', 6);
  const topics: TopicMetadataV4[] = [];
  for (let i = 0; i < topicCount; i++) {
    const name = reader.string(`topics[${i}].name`);
    const partitionCount = readCount(reader, `topics[${i}].partitionCount`, 30);
    const partitions: PartitionMetadataV4[] = [];
    for (let j = 0; j < partitionCount; j++) {
      const field = `topics[${i}].partitions[${j}]`;
      partitions.push({
        partition: reader.int32(`${field}.partition`),
        logStartOffset: readOffset(reader, `${field}.logStartOffset`),
        highWatermark: readOffset(reader, `${field}.highWatermark`),
        route: readRouteV2(reader, `${field}.route`),
      });
    }
    topics.push({ name, partitions });
  }
  return { revision, topics };
}
