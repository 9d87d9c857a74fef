/**
 * Crash: the real broker, several producers writing self-identifying records (WRITTEN and FORCED
 * mixed) over the wire, SIGKILL to the broker's process group at a random moment, restart on the same
 * data directory, read everything back. A SIGKILL loses nothing the kernel already has, so every
 * acknowledged record (WRITTEN ones too) must come back at its acknowledged offset.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AckPolicy, type AckPolicyValue } from '@booblik/protocol';
import { BrokerProcess, tempDir } from '@booblik/testkit';
import { budget, seed } from '../kit/budget.js';
import { parseSelfChecking, selfChecking } from '../kit/payloads.js';
import { Rng } from '../kit/rng.js';
import { offsetsOf, producedOf, readRange, WireClient } from '../kit/wire-client.js';

const TOPIC = 'crash';
const PARTITIONS = 2;
const PRODUCERS = 6;
/** Producer id of the one record each round writes after recovery, to check where appends continue. */
const CONTINUE_PRODUCER = 999;
/** Small segments and index intervals, so kills land around segment rolls and index entries too. */
const FLAGS = [
  `--topics=${TOPIC}:${PARTITIONS}`,
  '--segment.capacity.bytes=65536',
  '--index.interval.bytes=1024',
];

interface Acked {
  /** offset -> payload, per partition: every record the broker acknowledged, ever. */
  byOffset: Map<number, Buffer>[];
}

/** Producers write until the broker dies; every answer that arrives is recorded as acknowledged. */
async function produceUntilKilled(
  broker: BrokerProcess,
  rng: Rng,
  acked: Acked,
  sequences: number[],
  killAfterAcks: number,
): Promise<number> {
  let acks = 0;
  const killNow = () => void broker.kill();
  const producer = async (id: number, r: Rng) => {
    let c: WireClient;
    try {
      c = await WireClient.connect(broker.port);
    } catch (error) {
      if (broker.stopRequested) return; // killed before this producer got going
      throw error;
    }
    try {
      for (;;) {
        const partition = r.int(0, PARTITIONS - 1);
        const count = r.chance(0.1) ? r.int(20, 60) : r.int(1, 8);
        const payloads = Array.from({ length: count }, () => selfChecking(id, sequences[id]!++));
        const ack: AckPolicyValue = r.chance(0.5) ? AckPolicy.FORCED : AckPolicy.WRITTEN;
        let answer: Awaited<ReturnType<WireClient['produce']>>;
        try {
          answer = await c.produce(TOPIC, partition, ack, payloads);
        } catch (error) {
          if (broker.stopRequested || c.closed) return; // the kill: this request's fate is unknown
          throw error;
        }
        assert.equal(answer.errorCode, 0, `producer ${id}: PRODUCE refused with ${answer.errorCode}`);
        const { baseOffset } = producedOf(answer);
        for (let i = 0; i < count; i++) acked.byOffset[partition]!.set(baseOffset + i, payloads[i]!);
        if (++acks === killAfterAcks) killNow();
      }
    } finally {
      c.close();
    }
  };
  const running = Array.from({ length: PRODUCERS }, (_, id) =>
    producer(id, rng.fork()).catch((error: unknown) => {
      killNow(); // a failed producer must not leave the others writing forever
      throw error;
    }),
  );
  if (killAfterAcks === 0) setImmediate(killNow); // a kill while the first requests are in flight
  await Promise.all(running);
  await broker.exited;
  return acks;
}

/** Appends a torn record to the newest segment of a partition: a header promising more than follows. */
function tearTail(dataDir: string, partition: number, rng: Rng): void {
  const partDir = path.join(dataDir, `${TOPIC}-${partition}`);
  const newest = fs
    .readdirSync(partDir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .at(-1);
  if (newest === undefined) return;
  const torn = Buffer.alloc(8 + rng.int(0, 40));
  torn.writeInt32BE(torn.length + rng.int(1, 100), 0); // runs past the end of the file
  rng.bytes(torn.length - 4).copy(torn, 4);
  fs.appendFileSync(path.join(partDir, newest), torn);
}

/** Registers the crash check. */
export function crashCheck(): void {
  describe('crash: SIGKILL of the broker process group', () => {
    it(`loses no acknowledged record, serves no corrupt one and keeps offsets contiguous over ${budget.crashRounds} kill-and-restart rounds (seed ${seed})`, async (t) => {
      const rng = new Rng(seed);
      const dir = tempDir(t, 'crash');
      const acked: Acked = { byOffset: Array.from({ length: PARTITIONS }, () => new Map()) };
      /** The log as read after the previous recovery: it must still be there, byte for byte. */
      const previous: Buffer[][] = Array.from({ length: PARTITIONS }, () => []);
      const sequences = new Array<number>(PRODUCERS).fill(0);
      let recoveryCuts = 0;
      let totalAcks = 0;

      for (let round = 0; round <= budget.crashRounds; round++) {
        const broker = await BrokerProcess.start(t, { dataDir: dir, flags: FLAGS, http: false });
        if (broker.lines.some((l) => l.includes('recovery cut'))) recoveryCuts++;
        const c = await WireClient.connect(broker.port);
        const context = `round ${round} (seed ${seed})`;
        for (let p = 0; p < PARTITIONS; p++) {
          const { logStartOffset, highWatermark } = await offsetsOf(c, TOPIC, p);
          assert.equal(logStartOffset, 0, `${context}: nothing was removed`);
          const records = await readRange(c, TOPIC, p, 0, highWatermark); // CRC-checked
          // What this round added, read again with a small maxBytes: answers cut inside records.
          const from = Math.min(previous[p]!.length, highWatermark);
          const again = await readRange(c, TOPIC, p, from, highWatermark, rng.pick([4096, 333]));
          for (const [i, r] of again.entries()) {
            assert.ok(
              r.equals(records[from + i]!),
              `${context}: offset ${from + i} reads differently in pieces`,
            );
          }
          assert.equal(
            records.length,
            highWatermark,
            `${context}: offsets 0..${highWatermark} are all there`,
          );

          const seen = new Set<string>();
          for (const [offset, r] of records.entries()) {
            const who = parseSelfChecking(r);
            assert.ok(who, `${context}: ${TOPIC}-${p} offset ${offset} is not a record any producer wrote`);
            const key = `${who.producer}/${who.sequence}`;
            assert.ok(!seen.has(key), `${context}: record ${key} appears twice (again at offset ${offset})`);
            seen.add(key);
          }
          for (const [offset, payload] of acked.byOffset[p]!) {
            assert.ok(
              records[offset]?.equals(payload),
              `${context}: acknowledged record at ${TOPIC}-${p} offset ${offset} is missing or changed`,
            );
          }
          for (const [offset, r] of previous[p]!.entries()) {
            assert.ok(
              records[offset]?.equals(r),
              `${context}: offset ${offset} changed since the last recovery`,
            );
          }

          const next = selfChecking(CONTINUE_PRODUCER, round * PARTITIONS + p);
          const answer = await c.produce(TOPIC, p, AckPolicy.FORCED, [next]);
          assert.equal(answer.errorCode, 0);
          assert.equal(
            producedOf(answer).baseOffset,
            highWatermark,
            `${context}: the next produce continues at the recovered end`,
          );
          acked.byOffset[p]!.set(highWatermark, next);
          previous[p] = [...records, next];
        }
        c.close();
        if (round === budget.crashRounds) {
          const exit = await broker.stop();
          assert.equal(exit.code, 0, `the last broker stops cleanly${broker.tail()}`);
          break;
        }
        // A random moment: after 0..400 acknowledgements, while six producers have requests in flight.
        const killAfterAcks = rng.chance(0.1) ? 0 : rng.int(1, 400);
        totalAcks += await produceUntilKilled(broker, rng, acked, sequences, killAfterAcks);
        // Now and then, what a machine crash can leave besides: half a record after the last whole one.
        // Recovery must cut it, and the next append must land where it was.
        if (rng.chance(0.25)) tearTail(dir, rng.int(0, PARTITIONS - 1), rng);
      }
      const records = acked.byOffset.reduce((n, m) => n + m.size, 0);
      t.diagnostic(
        `${budget.crashRounds} kills; ${totalAcks} acknowledged PRODUCE requests (${records} records) all recovered; ` +
          `${recoveryCuts} restarts found a torn tail to cut`,
      );
    });
  });
}
