import {
  type Capabilities,
  encodeInvalidArgumentResponse,
  encodeListResponse,
  encodeListResponseV2,
  frameBytesMax,
  type ListRequest,
  lengthPrefixBytes,
  listWaitMsMax,
  NO_WATCH,
  parseSelector,
  type Selector,
  SelectorError,
  selectorMatches,
} from '@booblik/protocol';
import type { Reply } from '../reply.js';
import type { ApiContext } from './context.js';
import type { HoldScope } from './fetch.js';

/**
 * LIST v1 and v2: the topics matching a label selector, each with its spec and a route per partition
 * (on one node: this broker, `endpoint`; in a cluster: the primary's advertised address, empty when
 * it has none; with `replicaRoutes`, v2, the epoch and every replica too). With a watch revision the
 * request is held, like a long FETCH, until the spec store moves past it (answered at once with the
 * new listing) or the wait ends (answered with that revision and no topics: nothing changed).
 */
export function handleList(
  req: ListRequest,
  capabilities: Capabilities,
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
  const answer = () => listing(capabilities, correlationId, ctx, selector, endpoint);
  const waitMs = Math.min(req.maxWaitMs, listWaitMsMax);
  if (req.watchRevision === NO_WATCH || ctx.topics.revision > req.watchRevision) return answer();
  const nothingChanged = () => {
    const unchanged = { revision: req.watchRevision, topics: [] };
    return capabilities.replicaRoutes
      ? encodeListResponseV2(correlationId, unchanged)
      : encodeListResponse(correlationId, unchanged);
  };
  if (waitMs === 0) return nothingChanged();
  return new Promise<Reply>((resolve) => {
    const done = (reply: () => Reply | null) => {
      ctx.clock.clearTimeout(timer);
      unsubscribe();
      unscope();
      const r = reply();
      // A null reply: the client left, nobody to answer (the session discards it anyway).
      resolve(r ?? []);
    };
    const timer = ctx.clock.setTimeout(() => done(nothingChanged), waitMs);
    // Routes change without a revision too (a new primary ready to serve): answered at the same
    // revision once the listing differs from the one the watch began with.
    const initial = answer();
    const unsubscribe = ctx.topics.onChange((revision, routesOnly) => {
      if (revision > req.watchRevision) {
        done(answer);
        return;
      }
      if (!routesOnly) return;
      const now = answer();
      if (!sameReply(initial, now)) done(() => now);
    });
    const unscope = scope.onEnd((reason) => done(reason === 'shutdown' ? nothingChanged : () => null));
  });
}

function sameReply(a: Reply, b: Reply): boolean {
  return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
}

function listing(
  capabilities: Capabilities,
  correlationId: number,
  ctx: ApiContext,
  selector: Selector,
  endpoint: string,
): Reply {
  const matching = ctx.topics.list().filter((spec) => selectorMatches(selector, spec.name, spec.labels));
  const routesOf = <R>(route: (topic: string, id: number) => R) =>
    matching.map((spec) => ({
      spec,
      routes: Array.from({ length: spec.partitions }, (_, id) => route(spec.name, id)),
    }));
  const revision = ctx.topics.revision;
  // RouteV2: every replica, its zone and whether it is in sync, from the cluster's records (no lag).
  const reply = capabilities.replicaRoutes
    ? encodeListResponseV2(correlationId, {
        revision,
        topics: routesOf((topic, id) => ctx.routing.routeV2Of(topic, id, endpoint, false)),
      })
    : encodeListResponse(correlationId, {
        revision,
        topics: routesOf((topic, id) => ctx.routing.routeOf(topic, id, endpoint)),
      });
  const topics = matching;
  if (reply.length - lengthPrefixBytes <= frameBytesMax) return reply;
  ctx.metrics.refused('INVALID_ARGUMENT');
  return encodeInvalidArgumentResponse(correlationId, {
    index: -1,
    message: `selector: ${JSON.stringify(selector.source)} matches ${topics.length} topics, an answer of ${reply.length} bytes, over the ${frameBytesMax}-byte frame: narrow it`,
  });
}
