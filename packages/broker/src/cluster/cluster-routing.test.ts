import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LAG_UNKNOWN, ReplicaFlag } from '@booblik/protocol';
import type { FailedPartition, ServedPartition } from '../partitions.js';
import { FakeKeyspaceCopy } from '../test-support/fake-keyspace-copy.js';
import { ClusterRouting, type ReplicatedPartitions } from './cluster-routing.js';

const SELF = { id: 'a', address: 'a:9092' };
const LIVE_IN_SYNC = ReplicaFlag.LIVE | ReplicaFlag.IN_SYNC;

/** A routing for broker `a` over a fake copy, its open and failed partitions and its replicated ones set by the test. */
function setUp() {
  const copy = new FakeKeyspaceCopy().addMember('a').addMember('b').addMember('c');
  const open = new Map<string, ServedPartition>();
  const failures = new Map<string, FailedPartition>();
  const registry = {
    get: (topic: string, id: number) => open.get(`${topic}/${id}`),
    failureOf: (topic: string, id: number) => failures.get(`${topic}/${id}`),
  };
  const serving = new Set<string>();
  const lags = new Map<string, Map<string, { records: number; millis: number }>>();
  const lagAsked: string[] = [];
  const replicated: ReplicatedPartitions = {
    isServing: (topic, partition) => serving.has(`${topic}/${partition}`),
    lagOf: (topic, partition) => {
      lagAsked.push(`${topic}/${partition}`);
      return lags.get(`${topic}/${partition}`);
    },
  };
  const routing = new ClusterRouting(copy, registry, SELF, replicated);
  /** Opens the partition here; returns what the registry serves. */
  const openHere = (topic: string, id: number) => {
    const partition = { topic, id } as unknown as ServedPartition;
    open.set(`${topic}/${id}`, partition);
    routing.invalidate(); // as the cluster node does when its local partitions change
    return partition;
  };
  return { copy, routing, openHere, failures, serving, lags, lagAsked };
}

describe('cluster routing', () => {
  test('a topic the copy does not hold, or a partition past its count, is unknown', () => {
    const s = setUp();
    assert.deepEqual(s.routing.resolve('nope', 0), { kind: 'unknown' });
    s.copy.addTopic('t', 2);
    s.copy.own('t', 0, 'a');
    s.openHere('t', 0);
    assert.deepEqual(s.routing.resolve('t', 2), { kind: 'unknown' });
    assert.deepEqual(s.routing.routeOf('t', 2), { primary: '', replicas: [] });
  });

  test('a partition owned here and open is served here, this broker its route', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'a');
    const partition = s.openHere('t', 0);
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'local', partition });
    assert.deepEqual(s.routing.routeOf('t', 0), { primary: 'a:9092', replicas: [] });
  });

  test('a partition owned here whose assignment went with a lapsed lease is still served here', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'a', { assigned: false });
    const partition = s.openHere('t', 0);
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'local', partition });
  });

  test('a partition owned here but not open yet is served nowhere, not sent elsewhere', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'a');
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'none' });
    assert.deepEqual(s.routing.routeOf('t', 0), { primary: '', replicas: [] });
  });

  test('a partition owned here that failed to open answers failed with its problem', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'a');
    s.failures.set('t/0', { topic: 't', id: 0, problem: 'disk on fire' });
    s.routing.invalidate();
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'failed', problem: 'disk on fire' });
  });

  test('a replicated partition owned here is never local before its primary serves', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'a', { replicas: ['a', 'b', 'c'], isr: ['a', 'b'] });
    const partition = s.openHere('t', 0);
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'none' });
    assert.deepEqual(s.routing.routeOf('t', 0), { primary: '', replicas: [] });
    s.serving.add('t/0');
    s.routing.invalidate();
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'local', partition });
    assert.deepEqual(
      s.routing.routeOf('t', 0),
      { primary: 'a:9092', replicas: ['b:9092'] },
      'its in-sync replicas but itself',
    );
  });

  test('a partition whose primary is another live member routes there, with its live in-sync replicas only', () => {
    const s = setUp();
    s.copy.addMember('d').addMember('e');
    s.copy.addTopic('t', 1).own('t', 0, 'b', { replicas: ['b', 'c', 'd', 'e'], isr: ['b', 'c', 'd'] });
    s.copy.removeMember('d');
    const route = { primary: 'b:9092', replicas: ['c:9092'] };
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'remote', route });
    assert.deepEqual(s.routing.routeOf('t', 0), route);
    assert.equal(s.routing.primaryOf('t', 0), 'b');
  });

  test('a partition whose primary holds no lease, or that nobody is assigned, is served nowhere', () => {
    const s = setUp();
    s.copy.addTopic('t', 2).own('t', 0, 'b').own('t', 1, 'c', { assigned: false });
    s.copy.removeMember('b');
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'none' });
    assert.equal(s.routing.primaryOf('t', 0), undefined);
    assert.deepEqual(s.routing.resolve('t', 1), { kind: 'none' });
  });

  test('a change of the copy drops the cached routes: a moved primary is followed at once', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'b');
    assert.equal(s.routing.routeOf('t', 0).primary, 'b:9092');
    s.copy.own('t', 0, 'c');
    assert.equal(s.routing.routeOf('t', 0).primary, 'c:9092');
    s.copy.removeMember('c');
    assert.deepEqual(s.routing.resolve('t', 0), { kind: 'none' });
    s.copy.addTopic('u', 1);
    assert.deepEqual(s.routing.resolve('u', 0), { kind: 'none' }, 'a topic created after a first look');
  });

  test('routeV2 flags each replica live when it holds a lease and in sync when in the set', () => {
    const s = setUp();
    s.copy.addMember('d', 'd:9092', 'z2');
    s.copy.addTopic('t', 1).own('t', 0, 'b', { replicas: ['b', 'c', 'd'], isr: ['b', 'd'], epoch: 7 });
    s.copy.removeMember('d');
    const route = s.routing.routeV2Of('t', 0, SELF.address, true);
    assert.equal(route.epoch, 7);
    assert.equal(route.primary, 'b:9092');
    assert.deepEqual(
      route.replicas.map((r) => [r.member, r.address, r.flags]),
      [
        ['b', 'b:9092', LIVE_IN_SYNC],
        ['c', 'c:9092', ReplicaFlag.LIVE],
        ['d', '', ReplicaFlag.IN_SYNC],
      ],
    );
    assert.ok(
      route.replicas.every((r) => r.lagRecords === LAG_UNKNOWN && r.lagMillis === LAG_UNKNOWN),
      'lags are known only on the primary',
    );
    assert.deepEqual(s.lagAsked, []);
  });

  test('routeV2 of a partition of one replica counts it in sync whatever the set says', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'b', { isr: [] });
    const [only] = s.routing.routeV2Of('t', 0, SELF.address, false).replicas;
    assert.equal(only?.flags, LIVE_IN_SYNC);
  });

  test('routeV2 on the primary gives lags only when asked: its own 0, each replica its own', () => {
    const s = setUp();
    s.copy.addTopic('t', 1).own('t', 0, 'a', { replicas: ['a', 'b', 'c'] });
    s.serving.add('t/0');
    s.openHere('t', 0);
    s.lags.set('t/0', new Map([['b', { records: 3, millis: 40 }]]));
    const lagsOf = (withLag: boolean) =>
      s.routing
        .routeV2Of('t', 0, SELF.address, withLag)
        .replicas.map((r) => [r.member, r.lagRecords, r.lagMillis]);
    assert.deepEqual(lagsOf(true), [
      ['a', 0, 0],
      ['b', 3, 40],
      ['c', LAG_UNKNOWN, LAG_UNKNOWN],
    ]);
    assert.deepEqual(lagsOf(false), [
      ['a', LAG_UNKNOWN, LAG_UNKNOWN],
      ['b', LAG_UNKNOWN, LAG_UNKNOWN],
      ['c', LAG_UNKNOWN, LAG_UNKNOWN],
    ]);
  });

  test('routeV2 of a partition with no owner record has epoch 0 and no replicas', () => {
    const s = setUp();
    s.copy.addTopic('t', 1);
    assert.deepEqual(s.routing.routeV2Of('t', 0, SELF.address, true), {
      epoch: 0,
      primary: '',
      replicas: [],
    });
  });
});
