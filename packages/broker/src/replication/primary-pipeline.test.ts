import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OwnerEntry } from '@booblik/cluster';
import type { Partition } from '@booblik/log';
import { ErrorCode, encodeReplicateResponse, InvariantError, type ReplicateAnswer } from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import type { PeerConnection } from '../cluster/peer-connection.js';
import { type PipelineDeps, PrimaryPipeline } from './primary-pipeline.js';

const EPOCH = 2;
const LAG_MAX_MS = 1000;

/** A partition as the pipeline sees it: an end that tests move, commits and failures recorded. */
function fakePartition(end: number, latestEpoch = 0) {
  const p = {
    name: 't-0',
    logEndOffset: end,
    highWatermark: { value: 0 },
    commits: [] as number[],
    failed: 0,
    gateOn: false,
    epochs: {
      latestEpoch,
      entries: [] as { epoch: number; startOffset: number }[],
      begin(epoch: number) {
        p.epochs.latestEpoch = epoch;
      },
      epochAt: () => EPOCH,
      endOf: (_epoch: number, endOffset: number) => ({ epoch: EPOCH, endOffset }),
    },
    setReplicationGate(gate: unknown) {
      p.gateOn = gate !== null;
    },
    commitTo(offset: number) {
      p.commits.push(offset);
    },
    publishCommitted() {},
    failUncommitted() {
      p.failed++;
    },
    readWritten: async () => Buffer.alloc(0),
  };
  return p;
}

/** Replicas that answer only when the test says so. */
class FakePeers {
  readonly pending: { address: string; answer: (frame: Buffer | null, failure?: string) => void }[] = [];
  connect(address: string): PeerConnection {
    return {
      isDead: false,
      send: (_pieces: readonly Buffer[], _timeoutMs: number, answer: (frame: Buffer | null) => void) => {
        this.pending.push({ address, answer });
      },
    } as unknown as PeerConnection;
  }
  /** Answers every request on its way to `address` with `answer`. */
  answer(address: string, answer: Partial<ReplicateAnswer> & { logEndOffset: number }): void {
    const mine = this.pending.filter((p) => p.address === address);
    for (const p of mine) this.pending.splice(this.pending.indexOf(p), 1);
    const full = { code: ErrorCode.NONE, lastEpoch: EPOCH, knownEpoch: EPOCH, ...answer };
    for (const p of mine) p.answer(encodeReplicateResponse(0, full).subarray(4));
  }
}

function setUp(o: { end?: number; isr?: string[]; latestEpoch?: number } = {}) {
  const clock = new ManualClock();
  const partition = fakePartition(o.end ?? 0, o.latestEpoch);
  const peers = new FakePeers();
  const owner: OwnerEntry = {
    member: 'a',
    replicas: ['a', 'b', 'c'],
    isr: o.isr ?? ['a', 'b', 'c'],
    epoch: EPOCH,
    createRevision: 1,
    modRevision: 1,
  } as OwnerEntry;
  const state = {
    owner,
    lines: [] as string[],
    inSyncWrites: [] as string[][],
    servingChanges: 0,
    replaced: [] as number[],
  };
  const deps: PipelineDeps = {
    selfId: 'a',
    owner: () => state.owner,
    addressOf: (m) => (m === 'a' ? undefined : `${m}:1`),
    connect: (address) => peers.connect(address),
    leaseCertain: () => true,
    writeInSync: async (_owner, isr) => {
      state.inSyncWrites.push([...isr]);
      state.owner = { ...state.owner, isr };
      return true;
    },
    minInSync: 1,
    lagMaxMs: LAG_MAX_MS,
    log: (line) => state.lines.push(line),
    inSyncChanged: () => {},
    servingChanged: () => state.servingChanges++,
    replaced: (epoch) => state.replaced.push(epoch),
  };
  const pipeline = new PrimaryPipeline(partition as unknown as Partition, 't', 0, EPOCH, deps, clock);
  return { clock, partition, peers, state, pipeline };
}

/** A group of `count` records written at the partition's end. */
function write(s: ReturnType<typeof setUp>, count: number): void {
  const base = s.partition.logEndOffset;
  s.partition.logEndOffset += count;
  s.pipeline.groupWritten(base, Buffer.alloc(count), count, false);
}

describe('primary pipeline states', () => {
  test('a new primary serves nothing until every in-sync replica holds the log it found', () => {
    const s = setUp({ end: 10 });
    assert.equal(s.pipeline.state, 'covering');
    assert.equal(s.pipeline.ready, false);
    s.peers.answer('b:1', { logEndOffset: 10 });
    assert.equal(s.pipeline.ready, false, 'c has not answered yet');
    s.peers.answer('c:1', { logEndOffset: 10 });
    assert.equal(s.pipeline.state, 'serving');
    assert.deepEqual(s.partition.commits, [10]);
    assert.equal(s.state.servingChanges, 1);
  });

  test('a replica behind past the lag bound is dropped from the in-sync set', async () => {
    const s = setUp();
    s.peers.answer('b:1', { logEndOffset: 0 });
    s.peers.answer('c:1', { logEndOffset: 0 });
    write(s, 5);
    s.peers.answer('b:1', { logEndOffset: 5 });
    assert.deepEqual(s.partition.commits, [], 'c holds none of it: nothing committed');
    s.clock.advance(LAG_MAX_MS);
    assert.deepEqual(s.state.inSyncWrites, [], 'not before the bound');
    s.clock.advance(LAG_MAX_MS / 2);
    assert.deepEqual(s.state.inSyncWrites, [['a', 'b']]);
    await Promise.resolve();
    assert.ok(
      s.state.lines.some((l) => l.includes('c holds 0 of 5') && l.includes('out of the in-sync set')),
    );
    s.clock.advance(LAG_MAX_MS / 4);
    assert.deepEqual(s.partition.commits, [5], 'b alone in sync now: committed');
  });

  test('a replica that caught up joins the in-sync set again', async () => {
    const s = setUp({ isr: ['a', 'b'] });
    s.peers.answer('b:1', { logEndOffset: 0 });
    s.peers.answer('c:1', { logEndOffset: 0 });
    await Promise.resolve();
    assert.deepEqual(s.state.inSyncWrites, [['a', 'b', 'c']]);
  });

  test('the commit offset is sent to idle replicas by a heartbeat soon after it moves', () => {
    const s = setUp();
    s.peers.answer('b:1', { logEndOffset: 0 });
    s.peers.answer('c:1', { logEndOffset: 0 });
    write(s, 3);
    assert.equal(s.peers.pending.length, 2, 'the group on its way to b and c');
    s.peers.answer('b:1', { logEndOffset: 3 });
    s.peers.answer('c:1', { logEndOffset: 3 });
    assert.deepEqual(s.partition.commits, [3]);
    assert.equal(s.peers.pending.length, 0);
    s.clock.advance(2);
    assert.equal(s.peers.pending.length, 2, 'a heartbeat carrying commit 3 to each');
  });

  test('a replica that knows a later epoch makes the primary step down', () => {
    const s = setUp();
    s.peers.answer('b:1', { code: ErrorCode.STALE_EPOCH, logEndOffset: 0, knownEpoch: EPOCH + 1 });
    assert.deepEqual(s.state.replaced, [EPOCH + 1]);
    assert.equal(s.pipeline.replaced, true);
  });

  test('a stopped primary acknowledges nothing more', () => {
    const s = setUp();
    s.peers.answer('b:1', { logEndOffset: 0 });
    s.peers.answer('c:1', { logEndOffset: 0 });
    write(s, 4);
    s.pipeline.stop('fenced');
    assert.equal(s.pipeline.state, 'stopped');
    assert.equal(s.partition.failed, 1, 'what waited is answered');
    assert.equal(s.partition.gateOn, false);
    s.peers.answer('b:1', { logEndOffset: 4 });
    s.peers.answer('c:1', { logEndOffset: 4 });
    assert.deepEqual(s.partition.commits, [], 'nothing committed after the stop');
    assert.equal(s.clock.pendingTimers, 0, 'no lag check left running');
  });
});

describe('replication rules a primary checks', () => {
  test('an in-sync set without its primary stops the partition: every batch refused', () => {
    const s = setUp();
    s.state.owner = { ...s.state.owner, isr: ['b', 'c'] };
    s.pipeline.ownerChanged();
    assert.equal(s.pipeline.state, 'broken');
    assert.match(s.pipeline.refusal?.message ?? '', /lacks its primary a/);
    assert.ok(s.state.lines.some((l) => l.includes('refusing every batch')));
    assert.equal(s.partition.gateOn, true, 'the gate stays on: nothing is written unreplicated');
    s.peers.answer('b:1', { logEndOffset: 0 });
    s.peers.answer('c:1', { logEndOffset: 0 });
    assert.equal(s.pipeline.state, 'broken', 'never carries on');
  });

  test('a primary of an epoch older than its log has seen is refused', () => {
    assert.throws(() => setUp({ latestEpoch: EPOCH + 1 }), InvariantError);
  });
});
