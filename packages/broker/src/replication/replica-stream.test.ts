import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Partition } from '@booblik/log';
import {
  decodeReplicateRequest,
  ErrorCode,
  encodeReplicateResponse,
  type ReplicateAnswer,
  ReplicateFlag,
  type ReplicateRequest,
  recordHeaderBytes,
  requestHeaderBytes,
} from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import type { PeerConnection } from '../cluster/peer-connection.js';
import { ReplicaStream, type StreamHost } from './replica-stream.js';

const EPOCH = 3;

interface Sent {
  req: ReplicateRequest;
  answer: (frame: Buffer | null, failure?: string) => void;
}

/** A host with a log of `end` records (epoch 1 below `epoch1End`, EPOCH above) and a replica that answers when told. */
function setUp(end: number, epoch1End = 0) {
  const clock = new ManualClock();
  const sent: Sent[] = [];
  const lines: string[] = [];
  const replacedBy: number[] = [];
  const reads: number[] = [];
  let acks = 0;
  const epochAt = (o: number) => (o < epoch1End ? 1 : EPOCH);
  const partition = {
    logEndOffset: end,
    epochs: {
      entries: [
        { epoch: 1, startOffset: 0 },
        { epoch: EPOCH, startOffset: epoch1End },
      ],
      epochAt,
      endOf: (epoch: number, logEnd: number) => ({ epoch, endOffset: epoch === 1 ? epoch1End : logEnd }),
    },
    // Records of no body: each is its header alone.
    readWritten: async (from: number) => {
      reads.push(from);
      return Buffer.alloc((partition.logEndOffset - from) * recordHeaderBytes);
    },
  };
  const connection = {
    isDead: false,
    send: (pieces: readonly Buffer[], _timeoutMs: number, answer: Sent['answer']) => {
      const frame = Buffer.concat(pieces).subarray(4);
      sent.push({ req: decodeReplicateRequest(frame, requestHeaderBytes), answer });
    },
  };
  const host: StreamHost & { committed: number } = {
    partition: partition as unknown as Partition,
    topic: 't',
    id: 0,
    epoch: EPOCH,
    committed: 0,
    forcedEnd: 0,
    acked: () => acks++,
    replacedBy: (epoch) => replacedBy.push(epoch),
    connect: () => connection as unknown as PeerConnection,
    log: (line) => lines.push(line),
  };
  const stream = new ReplicaStream('b', 'b:1', host, clock);
  /** Answers the oldest request on its way. */
  const answer = (a: Partial<ReplicateAnswer> & { logEndOffset: number }) => {
    const next = sent.shift();
    assert.ok(next, 'a request on its way');
    next.answer(
      encodeReplicateResponse(0, {
        code: ErrorCode.NONE,
        lastEpoch: EPOCH,
        knownEpoch: EPOCH,
        ...a,
      }).subarray(4),
    );
    return next.req;
  };
  const acked = () => acks;
  return { clock, sent, lines, replacedBy, reads, partition, host, stream, answer, acked };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('replica stream', () => {
  test('a replica level with the primary is confirmed by the first probe', () => {
    const s = setUp(10);
    assert.equal(s.sent.length, 1);
    assert.equal(s.sent[0]?.req.baseOffset, 10, 'the probe asks at the primary end');
    s.answer({ logEndOffset: 10 });
    assert.equal(s.stream.level, true);
    assert.equal(s.stream.inContact, true);
    assert.equal(s.acked(), 1);
  });

  test('the probe of a lagging replica starts a copy from its end, and it catches up', async () => {
    const s = setUp(10);
    s.clock.advance(500);
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 4 });
    assert.equal(s.stream.level, false);
    assert.equal(s.stream.behindMs(), 500, 'behind since the stream began');
    await tick();
    assert.deepEqual(s.reads, [4]);
    const copy = s.answer({ logEndOffset: 10 });
    assert.equal(copy.baseOffset, 4);
    assert.equal(copy.count, 6);
    assert.equal(s.stream.level, true);
    assert.equal(s.stream.behindMs(), 0);
    assert.equal(s.stream.copiedRecords, 6);
  });

  test('a replica holding records of an epoch the primary ended earlier is cut back there', () => {
    const s = setUp(10, 5);
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 8, lastEpoch: 1 });
    const cut = s.sent[0]?.req;
    assert.ok(cut !== undefined && (cut.flags & ReplicateFlag.TRUNCATE) !== 0, 'a truncation is sent');
    assert.equal(cut.baseOffset, 5, 'to where epoch 1 ends on the primary');
    assert.ok(s.lines.some((l) => l.includes('diverged after 5')));
  });

  test('a replica that knows a later epoch refuses the stream: the host is told it was replaced', () => {
    const s = setUp(0);
    s.answer({ code: ErrorCode.STALE_EPOCH, logEndOffset: 0, knownEpoch: EPOCH + 1 });
    assert.equal(s.stream.staleEpoch, true);
    assert.deepEqual(s.replacedBy, [EPOCH + 1]);
    assert.equal(s.stream.state, 'paused');
  });

  test('a lost connection pauses the stream, retried after a pause that doubles', () => {
    const s = setUp(0);
    s.sent.shift()?.answer(null, 'connection lost');
    assert.equal(s.stream.state, 'paused');
    assert.ok(s.lines.some((l) => l.includes('no answer: connection lost')));
    // The stream asks again at once; that failing too pauses it twice as long.
    for (const x of s.sent.splice(0)) x.answer(null, 'connection lost');
    assert.deepEqual(s.clock.pendingDelays.slice(-1), [100], 'the second pause is twice the first');
    s.clock.advance(100);
    assert.equal(s.stream.state, 'live');
    assert.equal(s.sent.length, 1, 'probed again');
  });

  test('a stopped stream sends nothing more and leaves no timer', () => {
    const s = setUp(0);
    s.sent.shift()?.answer(null, 'connection lost');
    s.stream.stop();
    assert.equal(s.stream.state, 'stopped');
    assert.equal(s.clock.pendingTimers, 0, 'the retry is called off');
    s.sent.splice(0);
    s.clock.advance(10_000);
    assert.equal(s.sent.length, 0);
    assert.equal(s.clock.pendingTimers, 0);
  });

  test('a ping is answered false when the replica does not answer in time', async () => {
    const s = setUp(0);
    s.answer({ logEndOffset: 0 });
    const alive = s.stream.ping(1000);
    s.clock.advance(1000);
    assert.equal(await alive, false);
    const again = s.stream.ping(1000);
    s.answer({ logEndOffset: 0 });
    s.answer({ logEndOffset: 0 });
    assert.equal(await again, true);
  });

  test('a commit that moves while a group is on its way is carried by a heartbeat after its answer', () => {
    const s = setUp(0);
    s.answer({ logEndOffset: 0 });
    s.partition.logEndOffset = 2;
    s.stream.groupWritten(0, Buffer.alloc(2 * recordHeaderBytes), 2, false);
    s.host.committed = 1; // the other replicas answered first
    s.stream.heartbeat();
    assert.equal(s.sent.length, 1, 'owed, not sent: the group is on its way');
    s.answer({ logEndOffset: 2 });
    assert.equal(s.sent.length, 1, 'the owed heartbeat follows the answer');
    assert.equal(s.sent[0]?.req.count, 0);
    assert.equal(s.sent[0]?.req.commitOffset, 1);
  });

  test('idle and level, a keep-alive is an empty request at the replica end', () => {
    const s = setUp(10);
    s.answer({ logEndOffset: 10 });
    assert.equal(s.stream.step, 'idle');
    s.stream.keepAlive();
    assert.equal(s.sent.length, 1);
    assert.equal(s.sent[0]?.req.baseOffset, 10);
    assert.equal(s.sent[0]?.req.count, 0);
  });

  test('probing, a written group is held and follows the answer that finds the replica level', () => {
    const s = setUp(10);
    assert.equal(s.stream.step, 'probing');
    s.partition.logEndOffset = 12;
    s.stream.groupWritten(10, Buffer.alloc(2 * recordHeaderBytes), 2, false);
    s.stream.keepAlive();
    assert.equal(s.sent.length, 1, 'the probe alone: nothing goes before its answer');
    s.answer({ logEndOffset: 10 });
    assert.equal(s.stream.step, 'idle');
    assert.deepEqual([s.sent[0]?.req.baseOffset, s.sent[0]?.req.count], [10, 2], 'the held group');
  });

  test('truncating, nothing else is sent, and a cut to where both agree starts the copy from there', async () => {
    const s = setUp(10, 5);
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 8, lastEpoch: 1 });
    assert.equal(s.stream.step, 'truncating');
    s.stream.keepAlive();
    const alive = s.stream.ping(1000);
    assert.equal(s.sent.length, 1, 'the cut alone');
    assert.equal(await alive, false, 'not level while its tail is cut');
    s.answer({ logEndOffset: 5, lastEpoch: 1 });
    assert.equal(s.stream.step, 'reading');
    assert.equal(s.stream.ackedEnd, 5);
    assert.deepEqual(s.reads, [5]);
  });

  test('reading, a written group waits and follows the copy that joins on it', async () => {
    const s = setUp(10);
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 4 });
    assert.equal(s.stream.step, 'reading');
    s.partition.logEndOffset = 12;
    s.stream.groupWritten(10, Buffer.alloc(2 * recordHeaderBytes), 2, false);
    s.stream.keepAlive();
    assert.equal(s.sent.length, 0, 'nothing before the copy');
    await tick();
    assert.equal(s.stream.step, 'idle');
    assert.deepEqual(
      s.sent.map((x) => [x.req.baseOffset, x.req.count]),
      [
        [4, 6],
        [10, 2],
      ],
    );
  });

  test('reading, the answer to the copy before it starts no second read', async () => {
    const s = setUp(10, 5);
    const reads: (() => void)[] = [];
    const read = s.partition.readWritten;
    s.partition.readWritten = (from) => {
      const bytes = read(from);
      return new Promise((resolve) => reads.push(() => resolve(bytes)));
    };
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 0, lastEpoch: 0 });
    reads.shift()?.();
    await tick();
    assert.deepEqual(s.reads, [0, 5], 'epoch 1 sent, the next epoch being read');
    s.answer({ logEndOffset: 5 });
    assert.equal(s.stream.step, 'reading');
    reads.shift()?.();
    await tick();
    assert.deepEqual(s.reads, [0, 5]);
    assert.deepEqual([s.sent[0]?.req.baseOffset, s.sent[0]?.req.count], [5, 5]);
    assert.equal(s.stream.step, 'idle');
  });

  test('a mismatch answered to a probe a reset overtook never starts a cut while a copy is read', async () => {
    const s = setUp(10, 5);
    s.stream.setAddress('b:2'); // the replica moved: probed again
    assert.equal(s.sent.length, 2);
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 4, lastEpoch: 1 });
    assert.equal(s.stream.step, 'reading', 'the first answer starts the copy from 4');
    s.answer({ code: ErrorCode.OFFSET_MISMATCH, logEndOffset: 8, lastEpoch: 1 });
    assert.equal(s.stream.step, 'reading');
    assert.equal(s.sent.length, 0, 'no cut');
    await tick();
    assert.equal(s.sent[0]?.req.baseOffset, 4, 'the copy goes on');
  });
});
