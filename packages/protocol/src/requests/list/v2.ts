/**
 * LIST request v2 => as v1 (selector:string watchRevision:int64 maxWaitMillis:int32)
 * LIST response v2 (success body) => revision:int64 topicCount:int32
 *   [spec:TopicSpec routeCount:int32 [route:RouteV2]*routeCount]*topicCount
 *
 * What differs from v1: each route is a RouteV2 (epoch, every replica with its zone and whether it is
 * in sync). LIST answers from the cluster's records alone, without asking primaries, so the lags are
 * -1: METADATA v4 carries them.
 */
import { setRequestVersion } from '../../frame/header.js';
import { type RouteV2, readRouteV2, routeV2Bytes, writeRouteV2 } from '../../topics/route-v2.js';
import type { TopicSpec } from '../../topics/spec.js';
import { decodeRoutedListing, encodeListRequest, encodeRoutedListing, type ListRequest } from './v1.js';

export { decodeListRequest as decodeListRequestV2 } from './v1.js';

export interface ListedTopicV2 {
  spec: TopicSpec;
  /** One per partition, by id. */
  routes: RouteV2[];
}

export interface ListResponseV2 {
  revision: number;
  topics: ListedTopicV2[];
}

export function encodeListRequestV2(correlationId: number, req: ListRequest): Buffer {
  return setRequestVersion(encodeListRequest(correlationId, req), 2);
}

export function encodeListResponseV2(correlationId: number, res: ListResponseV2): Buffer {
  return encodeRoutedListing(correlationId, res, routeV2Bytes, writeRouteV2);
}

export function decodeListResponseV2(body: Buffer): ListResponseV2 {
  return decodeRoutedListing(body, readRouteV2, 10);
}
