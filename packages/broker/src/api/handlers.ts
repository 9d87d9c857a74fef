/**
 * The handler of every API, by apiKey: what the session looks up for each request. A new API is a
 * row in the protocol's API table, its handler file here, and its entry below (the type requires one
 * for every key the table has).
 */
import {
  AckPolicy,
  ApiKey,
  type ApiKeyValue,
  apiKeyMax,
  type Request,
  type RequestOf,
} from '@booblik/protocol';
import { fetchPayloadBytesMax } from '../limits.js';
import type { AnswerSink, Reply } from '../reply.js';
import type { ConnectionAuth } from '../security/connection-auth.js';
import { handleApiVersions } from './api-versions.js';
import { handleApply } from './apply.js';
import { handleAuthenticate } from './authenticate.js';
import type { ApiContext } from './context.js';
import { type HoldScope, handleFetch } from './fetch.js';
import { handleList } from './list.js';
import { handleListFragments } from './list-fragments.js';
import { handleMetadata } from './metadata.js';
import { handleMove } from './move.js';
import { handleProduce, handleUnansweredProduce, type UnansweredSink } from './produce.js';
import { handleReplicate } from './replicate.js';
import { handleUsers } from './users.js';

/** The connection a request came on, as its handler sees it. */
export interface RequestSource extends HoldScope {
  /** This broker as the client reached it (`host:port`): the route LIST and METADATA answer. */
  readonly endpoint: string;
  /** Who the connection is (AUTHENTICATE, USERS). */
  readonly auth: ConnectionAuth;
}

/** Answered with what `run` returns: the reply now, or a promise of it (its slot waits in order). */
export interface ReplyHandler<R> {
  readonly kind: 'reply';
  run(request: R, ctx: ApiContext, source: RequestSource): Reply | Promise<Reply>;
}

/**
 * Answered into a slot the session opens first, which holds `slotBytes` of the connection's budget
 * until the answer is written; `run` fills it, maybe before it returns.
 */
export interface SlotHandler<R> {
  readonly kind: 'slot';
  slotBytes(request: R, frameBytes: number): number;
  run(request: R, ctx: ApiContext, source: RequestSource, answer: AnswerSink): void;
  /** Requests that take no answer at all (a PRODUCE with ack NONE): no slot; their frame counts until `done`. */
  readonly unanswered?: {
    takes(request: R): boolean;
    run(request: R, ctx: ApiContext, done: UnansweredSink): void;
  };
}

export type ApiHandler<R> = ReplyHandler<R> | SlotHandler<R>;

const byKey: { readonly [K in ApiKeyValue]: ApiHandler<RequestOf<K>> } = {
  [ApiKey.PRODUCE]: {
    kind: 'slot',
    // The frame: the records are a view into it until the batch is written.
    slotBytes: (_request, frameBytes) => frameBytes,
    run: (r, ctx, _source, answer) => handleProduce(r.body, r.capabilities, r.correlationId, ctx, answer),
    unanswered: {
      takes: (r) => r.body.ack === AckPolicy.NONE,
      run: (r, ctx, done) => handleUnansweredProduce(r.body, r.capabilities, ctx, done),
    },
  },
  [ApiKey.FETCH]: {
    kind: 'slot',
    // The answer it asked for, up to one frame.
    slotBytes: (r) => Math.min(r.body.maxBytes, fetchPayloadBytesMax),
    run: (r, ctx, source, answer) =>
      handleFetch(r.body, r.capabilities, r.correlationId, ctx, source, answer),
  },
  [ApiKey.METADATA]: {
    kind: 'reply',
    run: (r, ctx, source) => handleMetadata(r.body, r.capabilities, r.correlationId, ctx, source.endpoint),
  },
  [ApiKey.APPLY]: { kind: 'reply', run: (r, ctx) => handleApply(r.body, r.correlationId, ctx) },
  [ApiKey.LIST]: {
    kind: 'reply',
    run: (r, ctx, source) =>
      handleList(r.body, r.capabilities, r.correlationId, ctx, source, source.endpoint),
  },
  [ApiKey.API_VERSIONS]: { kind: 'reply', run: (r) => handleApiVersions(r.correlationId) },
  [ApiKey.LIST_FRAGMENTS]: {
    kind: 'reply',
    run: (r, ctx) => handleListFragments(r.body, r.correlationId, ctx),
  },
  [ApiKey.MOVE]: { kind: 'reply', run: (r, ctx) => handleMove(r.body, r.correlationId, ctx) },
  [ApiKey.REPLICATE]: { kind: 'reply', run: (r, ctx) => handleReplicate(r.body, r.correlationId, ctx) },
  [ApiKey.AUTHENTICATE]: {
    kind: 'reply',
    run: (r, ctx, source) => handleAuthenticate(r.body, r.correlationId, ctx, source.auth),
  },
  [ApiKey.USERS]: {
    kind: 'reply',
    run: (r, ctx, source) => handleUsers(r.body, r.correlationId, ctx, source.auth),
  },
};

/** Indexed by apiKey (one array read per request); undefined for a key the table lacks. */
export const apiHandlers: readonly (ApiHandler<Request> | undefined)[] = Array.from(
  { length: apiKeyMax + 1 },
  (_, apiKey) => (byKey as Partial<Record<number, ApiHandler<Request>>>)[apiKey],
);
