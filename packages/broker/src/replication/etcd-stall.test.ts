import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  decodeMetadataResponseV5,
  ErrorCode,
  encodeFetchRequestV2,
  encodeMetadataRequestV5,
  errorName,
  MetadataOffsets,
} from '@booblik/protocol';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import { connect } from '../test-support/cluster-wire.js';
import type { RawClient } from '../test-support/raw-client.js';
import { ReplicatedTopic } from '../test-support/replicated-topic.js';
import { ReplicationOracle, seeded, withTimeout } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);
/** The stall's length: 5 to 10 s, past the lease, so etcd ends every lease when it wakes. */
const random = seeded(SEED);
const STALL_MS = 5000 + Math.floor(random() * 5000);
/** A read through any broker is answered at least this often while etcd is stopped and after. */
const READ_GAP_MS_MAX = 1500;
/** Writes go on through the stall itself; after it each partition fails over once (every lease ended). */
const WRITE_GAP_MS_MAX = 1500;
const RESUME_AFTER_STALL_MS = LEASE_MS + 2000;
/** How long after the stall reads and writes are judged too. */
const AFTER_STALL_MS = 5000;

/** One broker's view, polled: METADATA v5 and a FETCH v2 (what an original client sends) of the partition. */
interface Probe {
  broker: KitBroker;
  /** performance.now() of each answered FETCH. */
  fetched: number[];
  refusals: Map<string, number>;
  /** Every (logStart, highWatermark, offsets) METADATA v5 answered, with when. */
  ranges: { at: number; logStart: number; hw: number; offsets: number }[];
}

describe('an etcd stall of 5-10 s under load: three brokers, R=3', () => {
  let kit: ClusterKit;

  before(async () => {
    console.log(
      `etcd stall test: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices), stall ${STALL_MS} ms`,
    );
    kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS });
  });
  after(async () => {
    if (kit?.etcd.pid !== undefined) process.kill(kit.etcd.pid, 'SIGCONT');
    await kit?.cleanup();
  });

  const gap = (times: readonly number[], from: number, to: number): number => {
    let last = from;
    let longest = 0;
    for (const at of times) {
      if (at < from || at > to) continue;
      longest = Math.max(longest, at - last);
      last = at;
    }
    return Math.max(longest, to - last);
  };

  async function pollLoop(probe: Probe, topic: string, stop: () => boolean): Promise<void> {
    let client: RawClient | null = null;
    while (!stop()) {
      try {
        client ??= await connect(probe.broker.address);
        const mid = client.id();
        client.send(encodeMetadataRequestV5(mid, { topics: [topic], minRevision: 0, flags: 0 }));
        const fid = client.id();
        client.send(
          encodeFetchRequestV2(fid, {
            topic,
            partition: 0,
            fetchOffset: 0,
            maxBytes: 256,
            maxWaitMs: 0,
            minBytes: 0,
          }),
        );
        const md = await withTimeout(client.expect(mid), 3000, 'METADATA v5');
        const fe = await withTimeout(client.expect(fid), 3000, 'FETCH v2');
        const at = performance.now();
        if (md.errorCode === ErrorCode.NONE) {
          const p = decodeMetadataResponseV5(md.body).topics[0]!.partitions[0]!;
          probe.ranges.push({ at, logStart: p.logStartOffset, hw: p.highWatermark, offsets: p.offsets });
        }
        if (fe.errorCode === ErrorCode.NONE) probe.fetched.push(at);
        else {
          const name = errorName(fe.errorCode);
          probe.refusals.set(name, (probe.refusals.get(name) ?? 0) + 1);
        }
      } catch {
        client?.close();
        client = null;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    client?.close();
  }

  test('nothing refused is stored, nothing acknowledged is lost, and committed data stays readable through every broker', async () => {
    const topic = new ReplicatedTopic(kit, 'stalled', random);
    await topic.create(3);
    const up = () => kit.brokers.map((b) => b.address);
    const oracle = new ReplicationOracle('stalled', 0, up, random);
    const probes: Probe[] = kit.brokers.map((broker) => ({
      broker,
      fetched: [],
      refusals: new Map(),
      ranges: [],
    }));
    let polling = true;
    const polls: Promise<void>[] = [];
    let stalledAt = 0;
    let resumedAt = 0;
    let ackedBefore = 0;
    try {
      await topic.primary(10_000);
      oracle.startProducers(4);
      oracle.startConsumer('c1');
      await oracle.acknowledgedMore(100, 30_000);
      for (const probe of probes) polls.push(pollLoop(probe, 'stalled', () => !polling));
      ackedBefore = Math.max(...oracle.acknowledged.map((a) => a.offset)) + 1;
      process.kill(kit.etcd.pid!, 'SIGSTOP');
      stalledAt = performance.now();
      await new Promise((resolve) => setTimeout(resolve, STALL_MS));
      process.kill(kit.etcd.pid!, 'SIGCONT');
      resumedAt = performance.now();
      await oracle.firstAckAfter(resumedAt + 500, RESUME_AFTER_STALL_MS);
      // The load goes on through the window judged after the stall (every broker rejoins, a failover).
      const left = resumedAt + AFTER_STALL_MS - performance.now();
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      await oracle.acknowledgedMore(100, 30_000);
    } finally {
      polling = false;
      await Promise.all(polls);
      await oracle.stop();
    }
    const finalLog = await topic.finalLog();
    if (process.env.BOOBLIK_TEST_VERBOSE) {
      for (const b of kit.brokers)
        console.log(`--- ${b.name}\n${(b.process?.lines ?? []).slice(-20).join('\n')}`);
    }
    const stalledAcks = oracle.acknowledged.filter((a) => a.at > stalledAt && a.at < resumedAt).length;
    console.log(
      `through the stall: ${stalledAcks} acknowledged; refusals ${JSON.stringify([...oracle.refusals])}; ` +
        `longest write gap in the stall ${oracle.longestStall(stalledAt, resumedAt).toFixed(0)} ms, after it ` +
        `${oracle.longestStall(resumedAt, resumedAt + AFTER_STALL_MS).toFixed(0)} ms; longest read gap per broker ` +
        probes
          .map(
            (p) => `${p.broker.name} ${gap(p.fetched, stalledAt, resumedAt + AFTER_STALL_MS).toFixed(0)} ms`,
          )
          .join(', ') +
        `; FETCH refusals ${probes.map((p) => `${p.broker.name} ${JSON.stringify([...p.refusals])}`).join(', ')}`,
    );
    oracle.check(finalLog);
    assert.ok(
      oracle.longestStall(stalledAt, resumedAt) < WRITE_GAP_MS_MAX,
      `writes stopped for ${oracle.longestStall(stalledAt, resumedAt).toFixed(0)} ms while etcd was stopped`,
    );
    assert.ok(
      oracle.longestReadGap('c1', stalledAt, resumedAt + AFTER_STALL_MS) < READ_GAP_MS_MAX,
      `the consumer went ${oracle.longestReadGap('c1', stalledAt, resumedAt + AFTER_STALL_MS).toFixed(0)} ms without an answer`,
    );
    for (const p of probes) {
      const longest = gap(p.fetched, stalledAt, resumedAt + AFTER_STALL_MS);
      assert.ok(
        longest < READ_GAP_MS_MAX,
        `FETCH through ${p.broker.name} went ${longest.toFixed(0)} ms without an answer (refusals ${JSON.stringify([...p.refusals])})`,
      );
      for (const r of p.ranges) {
        if (r.at < stalledAt) continue;
        assert.notEqual(
          r.offsets,
          MetadataOffsets.UNKNOWN,
          `METADATA via ${p.broker.name}: offsets unknown, though it holds a copy`,
        );
        assert.ok(
          r.hw >= ackedBefore && r.hw <= finalLog.length && r.logStart <= r.hw,
          `METADATA via ${p.broker.name} showed ${r.logStart}..${r.hw}: ${ackedBefore} records were committed before the stall, ${finalLog.length} at the end`,
        );
      }
    }
    await topic.sameLogsEverywhere();
  });
});
