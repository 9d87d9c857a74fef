/**
 * METADATA request v5 => as v4 (topicCount:int32 topic:string*topicCount minRevision:int64 flags:int8)
 * METADATA response v5 (success body) => revision:int64 topicCount:int32
 *   [name:string partitionCount:int32
 *     [partition:int32 logStartOffset:int64 highWatermark:int64 offsets:int8 route:RouteV2]*partitionCount]*topicCount
 *
 * What differs from v4: `offsets` says what the two offsets before it are, so an answer never shows
 * a range a partition does not have without saying so. PRIMARY: the primary's (or the single
 * broker's) now. COPY: as a copy of the partition on the answering broker knows them, when the
 * primary did not answer or there is none: the partition holds at least that range, all of it
 * committed; the primary may have more. UNKNOWN: no copy answered; both offsets are 0 and mean
 * nothing. v1..v4 answers carry the same offsets without the byte (0 and 0 when not known).
 */
import { fieldError, type WireReader } from '../../codec/reader.js';
import type { WireWriter } from '../../codec/writer.js';
import { setRequestVersion } from '../../frame/header.js';
import { type RouteV2, readRouteV2, routeV2Bytes, writeRouteV2 } from '../../topics/route-v2.js';
import type { PartitionMetadata } from './v1.js';
import { decodeRoutedMetadata, encodeRoutedMetadata } from './v2.js';
import { encodeMetadataRequestV3, type MetadataRequestV3 } from './v3.js';

export { decodeMetadataRequestV3 as decodeMetadataRequestV5 } from './v3.js';

export const MetadataOffsets = {
  PRIMARY: 0,
  COPY: 1,
  UNKNOWN: 2,
} as const;

export type MetadataOffsetsValue = (typeof MetadataOffsets)[keyof typeof MetadataOffsets];

export interface PartitionMetadataV5 extends PartitionMetadata {
  offsets: MetadataOffsetsValue;
  route: RouteV2;
}

export interface TopicMetadataV5 {
  name: string;
  partitions: PartitionMetadataV5[];
}

export interface MetadataResponseV5 {
  revision: number;
  topics: TopicMetadataV5[];
}

export function encodeMetadataRequestV5(correlationId: number, req: MetadataRequestV3): Buffer {
  return setRequestVersion(encodeMetadataRequestV3(correlationId, req), 5);
}

/** What follows a v5 entry's offsets: the offsets byte, then the RouteV2 (v2's codec carries it as the route). */
interface OffsetsAndRoute {
  offsets: MetadataOffsetsValue;
  route: RouteV2;
}

export function encodeMetadataResponseV5(correlationId: number, res: MetadataResponseV5): Buffer {
  const topics = res.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ ...p, route: { offsets: p.offsets, route: p.route } })),
  }));
  return encodeRoutedMetadata<OffsetsAndRoute>(
    correlationId,
    { revision: res.revision, topics },
    (r) => 1 + routeV2Bytes(r.route),
    (w: WireWriter, r) => {
      w.int8(r.offsets);
      writeRouteV2(w, r.route);
    },
  );
}

export function decodeMetadataResponseV5(body: Buffer): MetadataResponseV5 {
  const decoded = decodeRoutedMetadata<OffsetsAndRoute>(
    body,
    (reader: WireReader, field: string) => {
      // v2's codec names this place `route`: the offsets byte is the entry's own field.
      const offsetsField = `${field.replace(/\.route$/, '')}.offsets`;
      const offsets = reader.int8(offsetsField);
      if (offsets < MetadataOffsets.PRIMARY || offsets > MetadataOffsets.UNKNOWN) {
        throw fieldError(offsetsField, offsets, '0 (PRIMARY), 1 (COPY) or 2 (UNKNOWN)');
      }
      return { offsets: offsets as MetadataOffsetsValue, route: readRouteV2(reader, field) };
    },
    31,
  );
  return {
    revision: decoded.revision,
    topics: decoded.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map(({ route, ...p }) => ({
        ...p,
        offsets: route.offsets,
        route: route.route,
      })),
    })),
  };
}
