/**
 * Power cut: the real broker with its data directory on a FUSE filesystem that keeps only what was
 * synced (kit/power-cut-filesystem.ts): a file's bytes once fdatasync'ed, a name once its directory
 * was fsynced. Producers write FORCED records to a partition the broker creates at startup, on a data
 * directory it creates; once enough are acknowledged the broker is killed with requests in flight and
 * the power cut, dropping every unsynced write and directory entry. A broker started on what is left
 * must serve every FORCED-acknowledged record at its acknowledged offset.
 *
 * The mutants run the same scenario with the fsyncs of one directory answered but not honoured (the
 * data directory's parent, the data directory, the partition directory), as if the broker had never
 * made them. Each must lose acknowledged records: that proves the filesystem catches a missing
 * directory fsync, so the first test passing means the broker makes every one it needs.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { BrokerProcess } from '@booblik/testkit';
import { budget, seed } from '../kit/budget.js';
import { selfChecking } from '../kit/payloads.js';
import { type CutReport, PowerCutFilesystem } from '../kit/power-cut-filesystem.js';
import { Rng } from '../kit/rng.js';
import { offsetsOf, producedOf, readRange, WireClient } from '../kit/wire-client.js';

const TOPIC = 'power';
/** Created by the broker: nothing of the data directory exists before it starts. */
const DATA_DIR = 'data';
const PARTITION_DIR = `${DATA_DIR}/${TOPIC}-0`;
/**
 * Segment capacities: 64 MiB holds every acknowledged record in the first segment (records average
 * ~530 stored bytes, so 10,000 take ~5 MiB), the file a new partition starts with, whose name is synced
 * only when the partition opens; 64 KiB puts most of them behind segment rolls (each new name synced
 * at its roll).
 */
const FIRST_SEGMENT_BYTES = 64 * 1024 * 1024;
const ROLLING_SEGMENT_BYTES = 64 * 1024;
const PRODUCERS = 4;

interface Outcome {
  /** offset -> payload of every FORCED-acknowledged record */
  acked: Map<number, Buffer>;
  /** Acknowledged offsets missing, or holding other bytes, after the power cut. */
  lost: number[];
  /** Records the broker serves after the power cut. */
  survived: number;
  report: CutReport;
}

/** FORCED batches from several producers until `target` records are acknowledged; then `cut()` with requests in flight. */
async function produceThenCut(
  port: number,
  rng: Rng,
  acked: Map<number, Buffer>,
  target: number,
  cut: () => Promise<unknown>,
): Promise<void> {
  let stopping = false;
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const producer = async (id: number, r: Rng) => {
    const c = await WireClient.connect(port);
    try {
      for (let sequence = 0; !stopping; ) {
        const payloads = Array.from({ length: r.int(1, 8) }, () =>
          selfChecking(id, sequence++, r.int(10, 1000)),
        );
        let answer: Awaited<ReturnType<WireClient['produce']>>;
        try {
          answer = await c.produce(TOPIC, 0, AckPolicy.FORCED, payloads);
        } catch (error) {
          if (stopping) return; // the broker was killed under this request: it was never acknowledged
          throw error;
        }
        assert.equal(answer.errorCode, 0, `producer ${id}: a FORCED batch is acknowledged`);
        const { baseOffset } = producedOf(answer);
        for (const [i, p] of payloads.entries()) acked.set(baseOffset + i, p);
        if (acked.size >= target) reached();
      }
    } finally {
      c.close();
    }
  };
  const producers = Promise.all(Array.from({ length: PRODUCERS }, (_, id) => producer(id, rng.fork())));
  await Promise.race([enough, producers]);
  stopping = true;
  await cut();
  await producers;
}

async function powerCut(
  t: TestContext,
  segmentBytes: number,
  ignoreDirFsync: string[] = [],
): Promise<Outcome | { skip: string }> {
  const flags = [`--topics=${TOPIC}:1`, `--segment.capacity.bytes=${segmentBytes}`];
  const filesystem = await PowerCutFilesystem.mount(t, { ignoreDirFsync });
  if ('skip' in filesystem) return filesystem;
  const acked = new Map<number, Buffer>();
  const before = await BrokerProcess.start(t, {
    dataDir: path.join(filesystem.mountDir, DATA_DIR),
    flags,
    http: false,
  });
  try {
    await produceThenCut(before.port, new Rng(seed), acked, budget.powerCutAcks, () => before.kill());
  } finally {
    await before.kill(); // the mount cannot go while the broker holds its files
  }
  const report = await filesystem.cut();

  // The disk as the machine finds it when power returns: recover from it and read everything.
  const after = await BrokerProcess.start(t, {
    dataDir: path.join(filesystem.backingDir, DATA_DIR),
    flags,
    http: false,
  });
  try {
    const c = await WireClient.connect(after.port);
    const { logStartOffset, highWatermark } = await offsetsOf(c, TOPIC, 0);
    assert.equal(logStartOffset, 0, 'the log still starts at offset 0');
    const records = await readRange(c, TOPIC, 0, 0, highWatermark); // CRC-checked
    c.close();
    const lost = [...acked].filter(([offset, payload]) => !records[offset]?.equals(payload)).map(([o]) => o);
    return { acked, lost, survived: records.length, report };
  } finally {
    const exit = await after.stop();
    assert.equal(exit.code, 0, `the broker recovered from the power cut stops cleanly${after.tail()}`);
  }
}

function describeLoss(o: Outcome): string {
  return (
    `${o.lost.length} of ${o.acked.size} FORCED-acknowledged records lost (first at offset ${o.lost[0]}); ` +
    `${o.survived} records served after the cut; filesystem: ${JSON.stringify(o.report)} (seed ${seed})`
  );
}

/** The directories whose fsync the broker needs, by what their entry names. */
const MUTANTS = [
  { dir: '.', what: "the data directory's parent (the data directory's own name)" },
  { dir: DATA_DIR, what: 'the data directory (the partition directory’s name)' },
  { dir: PARTITION_DIR, what: 'the partition directory (the segment files’ names)' },
];

/** fsync of a directory, as the broker does it. */
function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

/** The filesystem alone: what a power cut keeps and drops, file by file. */
async function filesystemKeepsOnlyWhatWasSynced(t: TestContext): Promise<void> {
  const filesystem = await PowerCutFilesystem.mount(t);
  if ('skip' in filesystem) {
    t.skip(filesystem.skip);
    return;
  }
  const at = (name: string) => path.join(filesystem.mountDir, name);
  fs.mkdirSync(at('kept'));
  const synced = fs.openSync(at('kept/synced'), 'w');
  fs.writeSync(synced, 'durable');
  fs.fdatasyncSync(synced);
  fs.writeSync(synced, ' and lost'); // after the sync: dropped
  fs.closeSync(synced);
  fs.writeFileSync(at('kept/never-synced'), 'its name is durable, its bytes are not');
  syncDir(at('kept'));
  syncDir(filesystem.mountDir);
  const unnamed = fs.openSync(at('kept/unnamed'), 'w'); // created after the directory's sync
  fs.writeSync(unnamed, 'synced, but its name is not');
  fs.fsyncSync(unnamed);
  fs.closeSync(unnamed);
  fs.mkdirSync(at('lost')); // the root is not synced again
  fs.writeFileSync(at('lost/file'), 'gone with its directory');
  fs.rmSync(at('kept/never-synced')); // removed, but the directory was not synced since: it comes back

  const report = await filesystem.cut();
  const tree = (dir: string): string[] => fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
  assert.deepEqual(
    tree(filesystem.backingDir),
    ['kept', 'kept/never-synced', 'kept/synced'],
    JSON.stringify(report),
  );
  assert.equal(fs.readFileSync(path.join(filesystem.backingDir, 'kept/synced'), 'utf8'), 'durable');
  assert.equal(fs.readFileSync(path.join(filesystem.backingDir, 'kept/never-synced'), 'utf8'), '');
}

/** Registers the power-cut check and its mutants. */
export function powerCutCheck(): void {
  describe('power cut', () => {
    it('the power-cut filesystem keeps synced bytes and names and drops every other write, name and removal', (t) =>
      filesystemKeepsOnlyWhatWasSynced(t));
    for (const [where, segmentBytes] of [
      ['in its first segment', FIRST_SEGMENT_BYTES],
      ['across segment rolls', ROLLING_SEGMENT_BYTES],
    ] as const) {
      it(`every FORCED-acknowledged record of a new partition, ${where}, is served after a power cut (${budget.powerCutAcks} acknowledgements, unsynced writes and directory entries dropped)`, async (t) => {
        const outcome = await powerCut(t, segmentBytes);
        if ('skip' in outcome) {
          t.skip(outcome.skip);
          return;
        }
        assert.ok(outcome.report.fileSyncs > 0, 'the broker synced through the filesystem');
        assert.equal(outcome.lost.length, 0, describeLoss(outcome));
        t.diagnostic(
          `${outcome.acked.size} FORCED-acknowledged records all served after the power cut (${outcome.report.filesAfter} file(s) left on the disk); ` +
            `${outcome.report.bytesBefore - outcome.report.bytesAfter} unsynced bytes dropped`,
        );
      });
    }
    for (const mutant of MUTANTS) {
      it(`mutant: with the fsyncs of ${mutant.what} ignored, the power cut loses acknowledged records (the filesystem catches a missing directory fsync)`, async (t) => {
        const outcome = await powerCut(t, FIRST_SEGMENT_BYTES, [mutant.dir]);
        if ('skip' in outcome) {
          t.skip(outcome.skip);
          return;
        }
        assert.ok(
          outcome.report.ignoredDirSyncs > 0,
          `the broker fsyncs ${mutant.dir} (so the mutant removed something): ${JSON.stringify(outcome.report)}`,
        );
        assert.ok(
          outcome.lost.length > 0,
          `without its fsync of ${mutant.dir} the broker lost nothing: the power cut does not drop unsynced entries. ${describeLoss(outcome)}`,
        );
        t.diagnostic(describeLoss(outcome));
      });
    }
  });
}
