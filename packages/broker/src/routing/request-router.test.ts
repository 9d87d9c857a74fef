/** Where a PRODUCE or FETCH is served, decided once, against a fake route table. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ApiKey,
  apiVersionOf,
  type Capabilities,
  ErrorCode,
  ReplicaFlag,
  type Route,
  type RouteV2,
} from '@booblik/protocol';
import type { PartitionResolver, Resolution, ServedPartition } from '../partitions.js';
import { type ReplicaRoles, RequestRouter } from './request-router.js';

const route: Route = { primary: '10.0.0.2:9092', replicas: ['10.0.0.3:9092'] };
const primaryHere = { topic: 't', id: 0, logEndOffset: 10 } as unknown as ServedPartition;
/** This broker's in-sync copy, holding offsets 0..10. */
const replicaCopy = { topic: 't', id: 0, logEndOffset: 10 } as unknown as ServedPartition;

const fetchV3 = apiVersionOf(ApiKey.FETCH, 3)!.capabilities; // follows routes
const fetchV4 = apiVersionOf(ApiKey.FETCH, 4)!.capabilities; // replica-readable
const fetchV1 = apiVersionOf(ApiKey.FETCH, 1)!.capabilities; // proxied
const produceV3 = apiVersionOf(ApiKey.PRODUCE, 3)!.capabilities;
const produceV1 = apiVersionOf(ApiKey.PRODUCE, 1)!.capabilities;

interface Table {
  where: Resolution;
  replicaHere?: boolean;
  /** Route V2 replicas (member, address, flags) for the no-primary fallback. */
  replicas?: RouteV2['replicas'];
  writeRefusal?: { code: number; message: string } | null;
  readOnly?: boolean;
}

function router(table: Table): RequestRouter {
  const resolver: PartitionResolver = {
    resolve: () => table.where,
    routeOf: () => route,
    routeV2Of: () => ({ epoch: 1, primary: '', replicas: table.replicas ?? [] }),
  };
  const replicas: ReplicaRoles = {
    replicaReadable: () => (table.replicaHere ? replicaCopy : undefined),
    writeRefusal: () => table.writeRefusal ?? null,
  };
  return new RequestRouter({
    resolver,
    replicas,
    proxying: true,
    selfId: 'b1',
    isReadOnly: () => table.readOnly ?? false,
  });
}

const fetch = (table: Table, capabilities: Capabilities, fetchOffset = 4) =>
  router(table).forFetch('t', 0, fetchOffset, capabilities);

describe('router: where a request is served is decided once', () => {
  it('router: the primary here serves a FETCH and a PRODUCE', () => {
    const table = { where: { kind: 'local', partition: primaryHere } } as const;
    assert.deepEqual(fetch(table, fetchV3), { kind: 'primary', partition: primaryHere });
    assert.deepEqual(router(table).forProduce('t', 0, produceV3), {
      kind: 'primary',
      partition: primaryHere,
    });
  });

  it('router: an in-sync replica here serves a replica-readable FETCH, not a route-following v3 one', () => {
    const table: Table = { where: { kind: 'remote', route }, replicaHere: true };
    assert.deepEqual(fetch(table, fetchV4), { kind: 'replica', partition: replicaCopy });
    assert.equal(fetch(table, fetchV3).kind, 'unknown');
  });

  it('router: a replica whose copy ends before the fetch offset does not answer it', () => {
    const table: Table = { where: { kind: 'remote', route }, replicaHere: true };
    assert.equal(fetch(table, fetchV4, 11).kind, 'unknown');
  });

  it('router: served elsewhere is proxied for an original client, NOT_PRIMARY with the route otherwise', () => {
    const table: Table = { where: { kind: 'remote', route } };
    assert.deepEqual(fetch(table, fetchV1), { kind: 'proxied', route, fromReplica: false });
    assert.deepEqual(router(table).forProduce('t', 0, produceV1), {
      kind: 'proxied',
      route,
      fromReplica: false,
    });
    const told = router(table).forProduce('t', 0, produceV3);
    assert.equal(told.kind, 'unknown');
    assert.equal(told.kind === 'unknown' && told.code, ErrorCode.NOT_PRIMARY);
    assert.deepEqual(told.kind === 'unknown' && told.route, route);
  });

  it('router: no such topic or partition is UNKNOWN_TOPIC_OR_PARTITION, with no route', () => {
    const decision = fetch({ where: { kind: 'unknown' } }, fetchV4);
    assert.equal(decision.kind === 'unknown' && decision.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(decision.kind === 'unknown' && decision.route, undefined);
  });

  it('router: a route known with no live primary is NO_PRIMARY, read from an in-sync replica if one holds it', () => {
    const none: Table = { where: { kind: 'none' } };
    const refused = router(none).forProduce('t', 0, produceV1);
    assert.equal(refused.kind === 'unknown' && refused.code, ErrorCode.NO_PRIMARY);
    const noRead = fetch(none, fetchV3);
    assert.equal(noRead.kind === 'unknown' && noRead.code, ErrorCode.NO_PRIMARY);
    // Any version reads committed data from the copy here while there is no primary.
    assert.deepEqual(fetch({ ...none, replicaHere: true }, fetchV3), {
      kind: 'replica',
      partition: replicaCopy,
    });
    // An original client is forwarded to another live in-sync replica, never to this broker.
    const both = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
    const replicas = [
      { member: 'b1', address: '10.0.0.1:9092', flags: both, lagRecords: 0, lagMs: 0 },
      { member: 'b3', address: '10.0.0.3:9092', flags: both, lagRecords: 0, lagMs: 0 },
    ] as unknown as RouteV2['replicas'];
    assert.deepEqual(fetch({ ...none, replicas }, fetchV1), {
      kind: 'proxied',
      route: { primary: '10.0.0.3:9092', replicas: [] },
      fromReplica: true,
    });
  });

  it('router: a partition here that could not be opened is STORAGE_ERROR', () => {
    const decision = fetch({ where: { kind: 'failed', problem: 'EACCES' } }, fetchV3);
    assert.equal(decision.kind === 'unknown' && decision.code, ErrorCode.STORAGE_ERROR);
  });

  it('router: a PRODUCE the primary here may not take is refused with replication reason or read-only', () => {
    const local = { kind: 'local', partition: primaryHere } as const;
    const refusal = { code: ErrorCode.NOT_ENOUGH_REPLICAS, message: 't-0: 1 in sync, 2 needed' };
    const refused = router({ where: local, writeRefusal: refusal }).forProduce('t', 0, produceV3);
    assert.deepEqual(refused, { kind: 'unknown', code: refusal.code, what: refusal.message });
    const readOnly = router({ where: local, readOnly: true }).forProduce('t', 0, produceV3);
    assert.equal(readOnly.kind === 'unknown' && readOnly.code, ErrorCode.TOPIC_READ_ONLY);
  });
});
