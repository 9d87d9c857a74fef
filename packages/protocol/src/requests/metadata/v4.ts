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
import { setRequestVersion } from '../../frame/header.js';
import { type RouteV2, readRouteV2, routeV2Bytes, writeRouteV2 } from '../../topics/route-v2.js';
import type { PartitionMetadata } from './v1.js';
import { decodeRoutedMetadata, encodeRoutedMetadata } from './v2.js';
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
  return encodeRoutedMetadata(correlationId, res, routeV2Bytes, writeRouteV2);
}

export function decodeMetadataResponseV4(body: Buffer): MetadataResponseV4 {
  return decodeRoutedMetadata(body, readRouteV2, 30);
}
