/**
 * LIST request v2 => as v1 (selector:string watchRevision:int64 maxWaitMillis:int32)
 * LIST response v2 (success body) => revision:int64 topicCount:int32
 *   [spec:TopicSpec routeCount:int32 [route:RouteV2]*routeCount]*topicCount
 *
 * What differs from v1: each route is a RouteV2 (epoch, every replica with its zone and whether it is
 * in sync). LIST answers from the cluster's records alone, without asking primaries, so the lags are
 * -1: METADATA v4 carries them.
 */
import { readCount, WireReader } from '../../codec/reader.js';
import { WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { setRequestVersion } from '../../frame/header.js';
import { lengthPrefixBytes, responseHeaderBytes } from '../../limits.js';
import { type RouteV2, readRouteV2, routeV2Bytes, writeRouteV2 } from '../../topics/route-v2.js';
import { readTopicSpec, type TopicSpec, topicSpecBytes, writeTopicSpec } from '../../topics/spec.js';
import { encodeListRequest, type ListRequest } from './v1.js';

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
  let bodyBytes = 8 + 4;
  for (const t of res.topics) {
    bodyBytes += topicSpecBytes(t.spec) + 4;
    for (const r of t.routes) bodyBytes += routeV2Bytes(r);
  }
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  w.int64(res.revision).int32(res.topics.length);
  for (const t of res.topics) {
    writeTopicSpec(w, t.spec);
    w.int32(t.routes.length);
    for (const r of t.routes) writeRouteV2(w, r);
  }
  return w.done();
}

export function decodeListResponseV2(body: Buffer): ListResponseV2 {
  const reader = new WireReader(body);
  const revision = reader.int64('revision');
  const topicCount = readCount(reader, 'topicCount', 40);
  const topics: ListedTopicV2[] = [];
  for (let i = 0; i < topicCount; i++) {
    const spec = readTopicSpec(reader, `topics[${i}].spec`);
    const routeCount = readCount(reader, `topics[${i}].routeCount`, 10);
    const routes: RouteV2[] = [];
    for (let j = 0; j < routeCount; j++) routes.push(readRouteV2(reader, `topics[${i}].routes[${j}]`));
    topics.push({ spec, routes });
  }
  return { revision, topics };
}
