/**
 * Full disk: the real broker with its data directory on a small filesystem mounted by the test (a
 * size-limited tmpfs, and an ext4 image on a loop device), filled with a ballast file. Producers
 * write until the disk refuses; then every refusal must be STORAGE_ERROR (code 6, an addition to the
 * spec's table that older clients show as UNKNOWN(6)) with the request's correlationId, the
 * connection must still be served, FETCH must serve exactly the acknowledged records (nothing of a
 * refused batch), and once the ballast is removed producing must work again at the next offset.
 * Last, a SIGKILL and a restart: recovery must find nothing half-written to cut.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { BrokerProcess } from '@booblik/testkit';
import { budget, seed } from '../kit/budget.js';
import { parseSelfChecking, selfChecking } from '../kit/payloads.js';
import { Rng } from '../kit/rng.js';
import { type FilesystemKind, freeBytes, mountSmallFilesystem } from '../kit/small-filesystem.js';
import { offsetsOf, producedOf, readRange, WireClient } from '../kit/wire-client.js';

const STORAGE_ERROR = 6;
const MIB = 1024 * 1024;
/** Room for the records of every cycle (each adds up to ~4 MiB) and ext4's own overhead. */
const FILESYSTEM_BYTES = (24 + 5 * budget.fullDiskCycles) * MIB;
const TOPIC = 'full';
/** 1 MiB segments: the disk also fills up at a segment roll, where a new file must be created. */
const FLAGS = [`--topics=${TOPIC}:1`, `--segment.capacity.bytes=${MIB}`];
const PRODUCERS = 3;

interface Ledger {
  /** offset -> payload of every acknowledged record */
  acked: Map<number, Buffer>;
  /** `producer/sequence` of every record in a refused batch: never to be served */
  refused: Set<string>;
  sequences: number[];
}

/** Leaves about `leaveBytes` free on the filesystem of `dir`, with a ballast file. */
function fillUp(dir: string, leaveBytes: number): string {
  const ballast = path.join(dir, 'ballast');
  const bytes = Math.max(0, freeBytes(dir) - leaveBytes);
  const fd = fs.openSync(ballast, 'w');
  try {
    const chunk = Buffer.alloc(MIB, 0xbb);
    for (let written = 0; written < bytes; ) {
      const n = Math.min(chunk.length, bytes - written);
      try {
        written += fs.writeSync(fd, chunk, 0, n);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break; // full already: good enough
        throw error;
      }
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return ballast;
}

/** Produces until every producer has been refused at least once; returns how many batches were. */
async function produceUntilRefused(
  port: number,
  rng: Rng,
  ledger: Ledger,
): Promise<{ acks: number; refusals: number }> {
  let acks = 0;
  let refusals = 0;
  const producer = async (id: number, r: Rng) => {
    const c = await WireClient.connect(port);
    try {
      for (let attempt = 0; attempt < 10_000; attempt++) {
        const count = r.int(1, 20);
        const payloads = Array.from({ length: count }, () => {
          const sequence = ledger.sequences[id]!++;
          return selfChecking(id, sequence, r.int(100, 20_000));
        });
        const ack = r.chance(0.5) ? AckPolicy.FORCED : AckPolicy.WRITTEN;
        const answer = await c.produce(TOPIC, 0, ack, payloads); // checks the echoed correlationId
        if (answer.errorCode === 0) {
          const { baseOffset } = producedOf(answer);
          for (let i = 0; i < count; i++) ledger.acked.set(baseOffset + i, payloads[i]!);
          acks++;
          continue;
        }
        assert.equal(
          answer.errorCode,
          STORAGE_ERROR,
          `a full disk is refused with STORAGE_ERROR, not ${answer.errorCode}`,
        );
        assert.equal(answer.body.length, 0, 'a refusal has no body');
        for (const p of payloads) {
          const who = parseSelfChecking(p)!;
          ledger.refused.add(`${who.producer}/${who.sequence}`);
        }
        refusals++;
        // The connection that was refused is still served.
        assert.equal((await c.metadata(TOPIC)).errorCode, 0, 'the refused connection still answers');
        return;
      }
      assert.fail(`producer ${id}: 10,000 batches and the disk never filled`);
    } finally {
      c.close();
    }
  };
  await Promise.all(Array.from({ length: PRODUCERS }, (_, id) => producer(id, rng.fork())));
  return { acks, refusals };
}

/** Reads the whole partition: exactly the acknowledged records, contiguous, nothing refused. */
async function checkLog(c: WireClient, ledger: Ledger, where: string): Promise<number> {
  const { logStartOffset, highWatermark } = await offsetsOf(c, TOPIC, 0);
  assert.equal(logStartOffset, 0);
  const records = await readRange(c, TOPIC, 0, 0, highWatermark, 256 * 1024); // CRC-checked
  assert.equal(records.length, highWatermark, `${where}: offsets 0..${highWatermark} all there`);
  for (const [offset, r] of records.entries()) {
    const who = parseSelfChecking(r);
    assert.ok(who, `${where}: offset ${offset} is not a record any producer wrote`);
    assert.ok(
      !ledger.refused.has(`${who.producer}/${who.sequence}`),
      `${where}: offset ${offset} holds record ${who.producer}/${who.sequence} of a refused batch`,
    );
  }
  for (const [offset, payload] of ledger.acked) {
    assert.ok(records[offset]?.equals(payload), `${where}: acknowledged offset ${offset} missing or changed`);
  }
  // Every record served was acknowledged: a refused or half-written batch left nothing behind.
  assert.equal(ledger.acked.size, highWatermark, `${where}: only acknowledged records are served`);
  return highWatermark;
}

async function fullDisk(t: import('node:test').TestContext, kind: FilesystemKind): Promise<void> {
  const mount = mountSmallFilesystem(t, kind, FILESYSTEM_BYTES);
  if ('skip' in mount) {
    t.skip(mount.skip);
    return;
  }
  const dataDir = path.join(mount.dir, 'data');
  const rng = new Rng(seed);
  const ledger: Ledger = {
    acked: new Map(),
    refused: new Set(),
    sequences: new Array(PRODUCERS + 1).fill(0),
  };
  let broker = await BrokerProcess.start(t, { dataDir, flags: FLAGS });
  try {
    const c = await WireClient.connect(broker.port);
    let totalRefusals = 0;
    for (let cycle = 0; cycle < budget.fullDiskCycles; cycle++) {
      const where = `${kind} cycle ${cycle} (seed ${seed})`;
      const ballast = fillUp(mount.dir, rng.int(1, 4) * MIB);
      const { refusals } = await produceUntilRefused(broker.port, rng, ledger);
      totalRefusals += refusals;
      const end = await checkLog(c, ledger, `${where}, disk full`); // FETCH keeps working

      fs.rmSync(ballast); // space freed
      assert.ok(freeBytes(mount.dir) > MIB, `${where}: removing the ballast freed space`);
      const after = selfChecking(PRODUCERS, ledger.sequences[PRODUCERS]!++);
      const answer = await c.produce(TOPIC, 0, AckPolicy.FORCED, [after]);
      assert.equal(
        answer.errorCode,
        0,
        `${where}: producing works again once space is freed${broker.tail()}`,
      );
      assert.equal(producedOf(answer).baseOffset, end, `${where}: at the next offset, no gap`);
      ledger.acked.set(end, after);
    }
    const storageErrors = await broker.metric('booblik_storage_errors_total');
    assert.ok((storageErrors ?? 0) >= totalRefusals, 'the broker counted the refused writes');
    c.close();

    // A crash now: recovery must find nothing half-written, and lose nothing acknowledged.
    await broker.kill();
    broker = await BrokerProcess.start(t, { dataDir, flags: FLAGS });
    const cuts = broker.lines.filter((l) => l.includes('recovery cut'));
    assert.deepEqual(cuts, [], `${kind}: nothing half-written survived to be cut at recovery`);
    const c2 = await WireClient.connect(broker.port);
    await checkLog(c2, ledger, `${kind} after a crash and recovery`);
    c2.close();
    const exit = await broker.stop();
    assert.equal(exit.code, 0, `${kind}: the broker stops cleanly${broker.tail()}`);
    t.diagnostic(
      `${kind}: ${budget.fullDiskCycles} fill-and-free cycles, ${totalRefusals} batches refused with STORAGE_ERROR, ` +
        `${ledger.acked.size} acknowledged records all served and recovered`,
    );
  } finally {
    await broker.kill(); // before the filesystem is unmounted
  }
}

/** Registers the full-disk check. */
export function fullDiskCheck(): void {
  describe('full disk', () => {
    for (const kind of ['tmpfs', 'ext4'] as const) {
      it(`on a full ${kind}: PRODUCE is refused with STORAGE_ERROR, nothing half-written is served or survives recovery, FETCH keeps working, and producing resumes once space is freed`, (t) =>
        fullDisk(t, kind));
    }
  });
}
