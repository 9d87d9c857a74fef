/**
 * LIST request v1 => selector:string watchRevision:int64 maxWaitMillis:int32
 * LIST response v1 (success body) => revision:int64 topicCount:int32
 *   [spec:TopicSpec routeCount:int32 [route:Route]*routeCount]*topicCount
 * Error body: INVALID_ARGUMENT (a selector that does not parse; index -1)
 *
 * Topics matching the selector (Gazette's grammar, topics/selector.ts; "" matches all), sorted by
 * name, each with its spec (whose revision is the store revision of its last change) and one route
 * per partition, by id. `revision` is the spec store's. watchRevision -1 answers at once; R >= 0
 * holds the request until the store's revision passes R (then answers the listing at the new
 * revision) or maxWaitMillis ends (capped at 60 000), when it answers revision R and no topics:
 * "nothing changed".
 */
import { ApiKey } from '../../api.js';
import { fieldError, readCount, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';
import { type Route, readRoute, routeBytes, writeRoute } from '../../topics/route.js';
import { readTopicSpec, type TopicSpec, topicSpecBytes, writeTopicSpec } from '../../topics/spec.js';

/** watchRevision that asks for no watch. */
export const NO_WATCH = -1;

export interface ListRequest {
  selector: string;
  watchRevision: number;
  maxWaitMs: number;
}

export interface ListedTopic {
  spec: TopicSpec;
  /** One per partition, by id. */
  routes: Route[];
}

export interface ListResponse {
  revision: number;
  topics: ListedTopic[];
}

export function decodeListRequest(frame: Buffer, payloadStart: number): ListRequest {
  const reader = new WireReader(frame, payloadStart);
  const selector = reader.string('selector');
  const watchRevision = reader.int64('watchRevision');
  if (watchRevision < NO_WATCH || watchRevision > Number.MAX_SAFE_INTEGER) {
    throw fieldError('watchRevision', watchRevision, '-1 (no watch) or 0..2^53-1');
  }
  const maxWaitMs = reader.int32('maxWaitMillis');
  if (maxWaitMs < 0) throw fieldError('maxWaitMillis', maxWaitMs, '>= 0');
  return { selector, watchRevision, maxWaitMs };
}

export function encodeListRequest(correlationId: number, req: ListRequest): Buffer {
  const payloadBytes = stringBytes(req.selector) + 8 + 4;
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.LIST)
    .int16(1)
    .int32(correlationId);
  w.string(req.selector).int64(req.watchRevision).int32(req.maxWaitMs);
  return w.done();
}

export function encodeListResponse(correlationId: number, res: ListResponse): Buffer {
  return encodeRoutedListing(correlationId, res, routeBytes, writeRoute);
}

export function decodeListResponse(body: Buffer): ListResponse {
  return decodeRoutedListing(body, readRoute, 6);
}

/** v1's answer with any route codec (v2 carries RouteV2 in the same places). */
export function encodeRoutedListing<R>(
  correlationId: number,
  res: { revision: number; topics: { spec: TopicSpec; routes: R[] }[] },
  bytesOf: (route: R) => number,
  write: (w: WireWriter, route: R) => void,
): Buffer {
  let bodyBytes = 8 + 4;
  for (const t of res.topics) {
    bodyBytes += topicSpecBytes(t.spec) + 4;
    for (const r of t.routes) bodyBytes += bytesOf(r);
  }
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE);
  w.int64(res.revision).int32(res.topics.length);
  for (const t of res.topics) {
    writeTopicSpec(w, t.spec);
    w.int32(t.routes.length);
    for (const r of t.routes) write(w, r);
  }
  return w.done();
}

/** `routeBytesMin`: the fewest bytes one route takes (bounds the count). */
export function decodeRoutedListing<R>(
  body: Buffer,
  read: (reader: WireReader, field: string) => R,
  routeBytesMin: number,
): { revision: number; topics: { spec: TopicSpec; routes: R[] }[] } {
  const reader = new WireReader(body);
  const revision = reader.int64('revision');
  const topicCount = readCount(reader, 'topicCount', 40);
  const topics: { spec: TopicSpec; routes: R[] }[] = [];
  for (let i = 0; i < topicCount; i++) {
    const spec = readTopicSpec(reader, `topics[${i}].spec`);
    const routeCount = readCount(reader, `topics[${i}].routeCount`, routeBytesMin);
    const routes: R[] = [];
    for (let j = 0; j < routeCount; j++) routes.push(read(reader, `topics[${i}].routes[${j}]`));
    topics.push({ spec, routes });
  }
  return { revision, topics };
}
