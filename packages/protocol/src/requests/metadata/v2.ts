/**
 * METADATA request v2 => topicCount:int32 topic:string * topicCount   (as v1)
 * METADATA response v2 (success body) => revision:int64 topicCount:int32
 *   [name:string partitionCount:int32
 *     [partition:int32 logStartOffset:int64 highWatermark:int64 route:Route]*]*
 *
 * What differs from v1: the spec store's revision first, and each partition's route.
 */
import { ApiKey } from '../../api.js';
import { readCount, readOffset, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { type Route, readRoute, routeBytes, writeRoute } from '../../topics/route.js';
import type { MetadataRequest, PartitionMetadata } from './v1.js';

export { decodeMetadataRequest as decodeMetadataRequestV2 } from './v1.js';

export interface PartitionMetadataV2 extends PartitionMetadata {
  route: Route;
}

export interface TopicMetadataV2 {
  name: string;
  partitions: PartitionMetadataV2[];
}

export interface MetadataResponseV2 {
  revision: number;
  topics: TopicMetadataV2[];
}

export function encodeMetadataRequestV2(correlationId: number, req: MetadataRequest): Buffer {
  let payloadBytes = 4;
  for (const t of req.topics) payloadBytes += stringBytes(t);
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.METADATA)
    .int16(2)
    .int32(correlationId);
  w.int32(req.topics.length);
  for (const t of req.topics) w.string(t);
  return w.done();
}

export function encodeMetadataResponseV2(correlationId: number, res: MetadataResponseV2): Buffer {
  return encodeRoutedMetadata(correlationId, res, routeBytes, writeRoute);
}

export function decodeMetadataResponseV2(body: Buffer): MetadataResponseV2 {
  return decodeRoutedMetadata(body, readRoute, 26);
}

/** v2's answer with any route codec (v4 carries RouteV2 in the same places). */
export function encodeRoutedMetadata<R>(
  correlationId: number,
  res: { revision: number; topics: { name: string; partitions: (PartitionMetadata & { route: R })[] }[] },
  bytesOf: (route: R) => number,
  write: (w: WireWriter, route: R) => void,
): Buffer {
  let bodyBytes = 8 + 4;
  for (const t of res.topics) {
    bodyBytes += stringBytes(t.name) + 4;
    for (const p of t.partitions) bodyBytes += 20 + bytesOf(p.route);
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
      write(w, p.route);
    }
  }
  return w.done();
}

/** `entryBytesMin`: the fewest bytes a partition entry with its route takes (bounds the count). */
export function decodeRoutedMetadata<R>(
  body: Buffer,
  read: (reader: WireReader, field: string) => R,
  entryBytesMin: number,
): { revision: number; topics: { name: string; partitions: (PartitionMetadata & { route: R })[] }[] } {
  const reader = new WireReader(body);
  const revision = reader.int64('revision');
  const topicCount = readCount(reader, 'topicCount', 6);
  const topics: { name: string; partitions: (PartitionMetadata & { route: R })[] }[] = [];
  for (let i = 0; i < topicCount; i++) {
    const name = reader.string(`topics[${i}].name`);
    const partitionCount = readCount(reader, `topics[${i}].partitionCount`, entryBytesMin);
    const partitions: (PartitionMetadata & { route: R })[] = [];
    for (let j = 0; j < partitionCount; j++) {
      const field = `topics[${i}].partitions[${j}]`;
      partitions.push({
        partition: reader.int32(`${field}.partition`),
        logStartOffset: readOffset(reader, `${field}.logStartOffset`),
        highWatermark: readOffset(reader, `${field}.highWatermark`),
        route: read(reader, `${field}.route`),
      });
    }
    topics.push({ name, partitions });
  }
  return { revision, topics };
}
