import {
  encodeInvalidArgumentResponse,
  encodeListResponse,
  frameBytesMax,
  type ListedTopic,
  type ListRequest,
  lengthPrefixBytes,
  listWaitMsMax,
  NO_WATCH,
  parseSelector,
  type Route,
  type Selector,
  SelectorError,
  selectorMatches,
} from '@booblik/protocol';
import type { ApiContext, Reply } from './context.js';
import type { HoldScope } from './fetch.js';

/**
 * LIST v1: the topics matching a label selector, each with its spec and a route per partition
 * (on one node: this broker, `endpoint`; in a cluster: the primary's advertised address, empty
 * when it has none). With a watch revision the request is held, like a long FETCH,
 * until the spec store moves past it (answered at once with the new listing) or the wait ends
 * (answered with that revision and no topics: nothing changed).
 */
export function handleList(
  req: ListRequest,
  correlationId: number,
  ctx: ApiContext,
  scope: HoldScope,
  endpoint: string,
): Reply | Promise<Reply> {
  let selector: Selector;
  try {
    selector = parseSelector(req.selector);
  } catch (error) {
    if (!(error instanceof SelectorError)) throw error;
    ctx.metrics.refused('INVALID_ARGUMENT');
    return encodeInvalidArgumentResponse(correlationId, { index: -1, message: error.message });
  }
  const answer = () => listing(correlationId, ctx, selector, endpoint);
  const waitMs = Math.min(req.maxWaitMs, listWaitMsMax);
  if (req.watchRevision === NO_WATCH || ctx.topics.revision > req.watchRevision) return answer();
  const nothingChanged = () => encodeListResponse(correlationId, { revision: req.watchRevision, topics: [] });
  if (waitMs === 0) return nothingChanged();
  return new Promise<Reply>((resolve) => {
    const done = (reply: () => Reply | null) => {
      clearTimeout(timer);
      unsubscribe();
      unscope();
      const r = reply();
      // A null reply: the client left, nobody to answer (the session discards it anyway).
      resolve(r ?? []);
    };
    const timer = setTimeout(() => done(nothingChanged), waitMs);
    const unsubscribe = ctx.topics.onChange((revision) => {
      if (revision > req.watchRevision) done(answer);
    });
    const unscope = scope.onEnd((reason) => done(reason === 'shutdown' ? nothingChanged : () => null));
  });
}

function listing(correlationId: number, ctx: ApiContext, selector: Selector, endpoint: string): Reply {
  const topics: ListedTopic[] = [];
  for (const spec of ctx.topics.list()) {
    if (!selectorMatches(selector, spec.name, spec.labels)) continue;
    const routes: Route[] = [];
    for (let id = 0; id < spec.partitions; id++) routes.push(ctx.routing.routeOf(spec.name, id, endpoint));
    topics.push({ spec, routes });
  }
  const reply = encodeListResponse(correlationId, { revision: ctx.topics.revision, topics });
  if (reply.length - lengthPrefixBytes <= frameBytesMax) return reply;
  ctx.metrics.refused('INVALID_ARGUMENT');
  return encodeInvalidArgumentResponse(correlationId, {
    index: -1,
    message: `selector: ${JSON.stringify(selector.source)} matches ${topics.length} topics, an answer of ${reply.length} bytes, over the ${frameBytesMax}-byte frame: narrow it`,
  });
}
