import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ClusterKit, type KitBroker, startClusterKit } from '../test-support/cluster-kit.js';
import { until } from '../test-support/cluster-wire.js';
import { isUp, ReplicatedTopic } from '../test-support/replicated-topic.js';
import { ReplicationOracle, seeded } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;
const LAG_MAX_MS = 1000;
const SEGMENT_BYTES = 4096;
/** Local copies kept of persisted segments: two segments' worth. */
const LOCAL_RETENTION_BYTES = 2 * SEGMENT_BYTES;
/** Segments the primary persists before the test looks: far more than the local retention keeps. */
const SEGMENTS_WRITTEN = 12;
/** A closed segment is uploaded within a second or two, found by replicas within a few more. */
const TRIMMED_WITHIN_MS = 30_000;
const SEED = Number(process.env.BOOBLIK_TEST_SEED ?? Date.now() % 1_000_000);

describe('local retention on replicas of a topic with a store: three brokers, R=3, file:// store', () => {
  let kit: ClusterKit;
  let storeDir: string;
  const random = seeded(SEED);

  before(async () => {
    console.log(`replica retention tests: seed ${SEED} (BOOBLIK_TEST_SEED=${SEED} repeats the choices)`);
    storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-replica-retention-'));
    kit = await startClusterKit({
      brokers: 3,
      leaseMs: LEASE_MS,
      flags: [
        `--replica.lag.max.millis=${LAG_MAX_MS}`,
        `--local.retention.bytes=${LOCAL_RETENTION_BYTES}`,
        '--retention.check.millis=200',
      ],
    });
  });
  after(async () => {
    await kit?.cleanup();
    fs.rmSync(storeDir, { recursive: true, force: true });
  });

  function dumpLogs(): void {
    for (const b of kit.brokers) {
      const lines = (b.process?.lines ?? []).filter((l) => /primary|replica|retention|store|sync/.test(l));
      console.log(`--- ${b.name} (${b.address})\n${lines.slice(-40).join('\n')}`);
    }
  }

  /** The partition's segment files on `b`'s disk: their count and bytes. */
  function onDisk(b: KitBroker, topic: string): { segments: number; bytes: number } {
    const dir = path.join(b.dataDir, `${topic}-0`);
    const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log'));
    return {
      segments: logs.length,
      bytes: logs.reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0),
    };
  }

  test("a replica's disk keeps the local retention of persisted segments plus the active one; after a failover the new primary serves the whole history", async () => {
    const topic = new ReplicatedTopic(kit, 'trimmed', random);
    await topic.create(3, { storeUrl: `file://${storeDir}`, segmentBytes: SEGMENT_BYTES });
    const running = () => kit.brokers.filter(isUp).map((b) => b.address);
    const oracle = new ReplicationOracle(topic.name, 0, running, random);
    oracle.startProducers(3);
    let primary: KitBroker | undefined;
    try {
      primary = await topic.primary(5000);
      // The primary trims its own disk already: what it wrote is counted in the store.
      const inStore = () => {
        const dir = path.join(storeDir, topic.name, '0');
        return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.log')).length : 0;
      };
      await until(
        async () => inStore(),
        (persisted) => persisted >= SEGMENTS_WRITTEN,
        `${SEGMENTS_WRITTEN} segments persisted by the primary`,
        60_000,
      );
      await oracle.stop();
      // Every replica trims its copy as the primary does: what is left is at most the local
      // retention, and the active segment, which is never persisted while it is written.
      const bound = LOCAL_RETENTION_BYTES + SEGMENT_BYTES;
      for (const b of kit.brokers) {
        await until(
          async () => onDisk(b, topic.name),
          (disk) => disk.bytes <= bound,
          `${b.name}${b === primary ? ' (primary)' : ''}: at most ${bound} B of segments on its disk`,
          TRIMMED_WITHIN_MS,
        );
      }
      const end = oracle.acknowledged.reduce((max, a) => Math.max(max, a.offset + 1), 0);
      assert.ok(end > 0);

      // The primary dies: an in-sync replica, holding little of the history on its disk, takes over.
      await primary.kill();
      const next = await topic.primary(LEASE_MS + 10_000);
      assert.notEqual(next, primary);
      await primary.start();
    } catch (error) {
      dumpLogs();
      throw error;
    } finally {
      await oracle.stop();
    }
    const log = await topic.finalLog();
    assert.ok(log.length >= oracle.acknowledged.length, `${log.length} records read back`);
    oracle.check(log);
  });
});
