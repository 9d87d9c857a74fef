/**
 * Where a request for a partition served elsewhere goes is decided by its version's capabilities in
 * the API table, in process with a fake context: proxied, answered here as a replica, or NOT_PRIMARY.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  type AckPolicyValue,
  ApiKey,
  apiRowOf,
  apiVersionOf,
  type Capabilities,
  decodeNotPrimary,
  ErrorCode,
  type FetchRequest,
  type ProduceRequest,
  type Route,
  readResponseFrame,
} from '@booblik/protocol';
import { BrokerMetrics } from '../metrics.js';
import type { PartitionResolver, ServedPartition } from '../partitions.js';
import type { AnswerSink, Reply } from '../reply.js';
import { type ReplicaRoles, RequestRouter } from '../routing/request-router.js';
import type { ApiContext } from './context.js';
import { handleFetch } from './fetch.js';
import { handleProduce, handleUnansweredProduce } from './produce.js';

const route: Route = { primary: '10.0.0.2:9092', replicas: ['10.0.0.3:9092'] };

/** A replica's copy, holding offsets 0..10, all committed. */
const replicaCopy = {
  topic: 't',
  id: 0,
  name: 't-0',
  logStartOffset: 0,
  logEndOffset: 10,
  highWatermark: { value: 10 },
  epochs: { latestEpoch: 0 },
  readNow: () => ({ highWatermark: 10, chunks: [], bytes: 0 }),
} as unknown as ServedPartition;

/** A cluster broker that does not serve `t-0`: another broker is its primary, and a copy may be here. */
function elsewhere(options: { replicaHere: boolean }) {
  const forwarded: string[] = [];
  const metrics = new BrokerMetrics();
  const routing = { resolve: () => ({ kind: 'remote', route }) } as unknown as PartitionResolver;
  const replication = {
    replicaReadable: () => (options.replicaHere ? replicaCopy : undefined),
  } as unknown as ReplicaRoles;
  const ctx = {
    routing,
    router: new RequestRouter({
      resolver: routing,
      replicas: replication,
      proxying: true,
      selfId: 'b1',
      isReadOnly: () => false,
    }),
    proxy: {
      fetch: () => forwarded.push('fetch'),
      produce: () => forwarded.push('produce'),
      produceUnanswered: () => forwarded.push('produce unanswered'),
    },
    replication,
    registry: { isRetired: () => false },
    metrics,
    noisyLog: { warn: () => {} },
  } as unknown as ApiContext;
  return { ctx, forwarded, metrics };
}

/** An answer sink that keeps the one reply. */
function sink() {
  const replies: Reply[] = [];
  const answer: AnswerSink = {
    deliver: (reply) => replies.push(reply),
    broken: (error) => assert.fail(String(error)),
  };
  return { answer, replies };
}

/** The error code of a reply (one buffer, or pieces whose first is the header). */
function codeOf(reply: Reply): number {
  const first = Buffer.isBuffer(reply) ? reply : 'pieces' in reply ? reply.pieces[0]! : reply[0]!;
  return readResponseFrame(first.subarray(4)).errorCode;
}

const fetchRequest: FetchRequest = {
  topic: 't',
  partition: 0,
  fetchOffset: 4,
  maxBytes: 1024,
  maxWaitMs: 0,
  minBytes: 0,
};
const noScope = { onEnd: () => () => {} };

/** What happened to a FETCH of each kind of version, through a broker that holds an in-sync copy. */
function fetchOutcome(capabilities: Capabilities): string {
  const { ctx, forwarded, metrics } = elsewhere({ replicaHere: true });
  const { answer, replies } = sink();
  handleFetch(fetchRequest, capabilities, 1, ctx, noScope, answer);
  if (forwarded.length > 0) return `proxied`;
  assert.equal(replies.length, 1);
  const code = codeOf(replies[0]!);
  if (code === ErrorCode.NOT_PRIMARY) {
    const notPrimary = readResponseFrame((replies[0] as Buffer).subarray(4));
    assert.deepEqual(decodeNotPrimary(notPrimary.body), route, 'the refusal names the route');
    return 'NOT_PRIMARY';
  }
  assert.equal(code, ErrorCode.NONE);
  assert.equal(metrics.replicaReads, 1);
  return 'read from the replica here';
}

describe('a version capabilities decide where a request served elsewhere goes', () => {
  it('FETCH: v1 and v2 proxied, v3 NOT_PRIMARY with the route, v4 and v5 read from an in-sync replica', () => {
    const outcomes = apiRowOf(ApiKey.FETCH)!.versions.map(
      (v) => `v${v.version} ${fetchOutcome(v.capabilities)}`,
    );
    assert.deepEqual(outcomes, [
      'v1 proxied',
      'v2 proxied',
      'v3 NOT_PRIMARY',
      'v4 read from the replica here',
      'v5 read from the replica here',
    ]);
  });

  it('FETCH: the flags decide, not the number (a replica-readable proxied version reads here)', () => {
    const v2 = apiVersionOf(ApiKey.FETCH, 2)!.capabilities;
    assert.equal(fetchOutcome({ ...v2, replicaReadable: true }), 'read from the replica here');
    assert.equal(fetchOutcome({ ...v2, proxied: false }), 'NOT_PRIMARY');
  });

  it('FETCH v4 without a readable copy here is NOT_PRIMARY, not proxied', () => {
    const { ctx, forwarded } = elsewhere({ replicaHere: false });
    const { answer, replies } = sink();
    handleFetch(fetchRequest, apiVersionOf(ApiKey.FETCH, 4)!.capabilities, 1, ctx, noScope, answer);
    assert.deepEqual(forwarded, []);
    assert.equal(codeOf(replies[0]!), ErrorCode.NOT_PRIMARY);
  });

  const produce = (ack: AckPolicyValue): ProduceRequest => ({
    topic: 't',
    partition: 0,
    ack,
    recordCount: 1,
    records: Buffer.from('00000001aabbccdd78', 'hex'),
    expectedOffset: -1,
  });

  it('PRODUCE: v1 and v2 proxied, v3 NOT_PRIMARY with the route', () => {
    const outcomes = apiRowOf(ApiKey.PRODUCE)!.versions.map((v) => {
      const { ctx, forwarded } = elsewhere({ replicaHere: true });
      const { answer, replies } = sink();
      handleProduce(produce(AckPolicy.WRITTEN), v.capabilities, 1, ctx, answer);
      if (forwarded.length > 0) return `v${v.version} ${forwarded.join()}`;
      return `v${v.version} ${codeOf(replies[0]!) === ErrorCode.NOT_PRIMARY ? 'NOT_PRIMARY' : 'written'}`;
    });
    assert.deepEqual(outcomes, ['v1 produce', 'v2 produce', 'v3 NOT_PRIMARY']);
  });

  it('PRODUCE with ack NONE: v1 and v2 sent on, v3 refused silently (never answered)', () => {
    const outcomes = apiRowOf(ApiKey.PRODUCE)!.versions.map((v) => {
      const { ctx, forwarded, metrics } = elsewhere({ replicaHere: true });
      let settled = 0;
      handleUnansweredProduce(produce(AckPolicy.NONE), v.capabilities, ctx, { settled: () => settled++ });
      assert.equal(settled, 1, 'its frame is released either way');
      if (forwarded.length > 0) return `v${v.version} ${forwarded.join()}`;
      assert.equal(metrics.refusals.get('NOT_PRIMARY'), 1);
      return `v${v.version} refused silently`;
    });
    assert.deepEqual(outcomes, ['v1 produce unanswered', 'v2 produce unanswered', 'v3 refused silently']);
  });
});
