import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { AckPolicy } from '@booblik/protocol';
import { tempDir } from '@booblik/testkit';
import { defaultLogConfig } from './config.js';
import { Partition } from './partition.js';
import { readAll } from './test-support/read-all.js';
import { batchOf } from './test-support/records.js';
import { fillerBytesFor, parseSelfChecking, selfCheckingPayload } from './test-support/self-checking.js';

const rounds = Number(process.env.BOOBLIK_CRASH_ROUNDS ?? 10);
const child = new URL('./test-support/crash-child.js', import.meta.url).pathname;
const SEGMENT_BYTES = 64 * 1024; // small, so crashes land around rolls too

interface Ack {
  ack: number;
  baseOffset: number;
  count: number;
  producer: number;
  firstSequence: number;
}

/** Runs the child until it has reported `acksBeforeKill` acknowledgements, then SIGKILLs it. */
async function runAndKill(dir: string, firstSequence: number, acksBeforeKill: number): Promise<Ack[]> {
  const proc = spawn(process.execPath, [child, dir, String(SEGMENT_BYTES), String(firstSequence)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acks: Ack[] = [];
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  for await (const line of createInterface({ input: proc.stdout })) {
    const [kind, ...fields] = line.split(' ');
    if (kind !== 'ack') continue;
    const [ack, baseOffset, count, producer, first] = fields.map(Number) as [
      number,
      number,
      number,
      number,
      number,
    ];
    acks.push({ ack, baseOffset, count, producer, firstSequence: first });
    if (acks.length === acksBeforeKill) proc.kill('SIGKILL');
  }
  await exited;
  return acks;
}

describe('crash', () => {
  it(`SIGKILL at varying moments (${rounds} rounds) loses no acknowledged record and serves nothing corrupt`, async (t) => {
    const dir = tempDir(t);
    const acknowledged = new Map<number, Buffer>(); // offset -> payload
    let nextSequence = 0;
    for (let round = 0; round < rounds; round++) {
      const acksBeforeKill = 1 + ((round * 7919) % 97);
      const acks = await runAndKill(dir, nextSequence, acksBeforeKill);
      assert.ok(acks.length >= acksBeforeKill, `round ${round}: the child reported its acks`);
      for (const a of acks) {
        for (let i = 0; i < a.count; i++) {
          const sequence = a.firstSequence + i;
          acknowledged.set(
            a.baseOffset + i,
            selfCheckingPayload(a.producer, sequence, fillerBytesFor(sequence)),
          );
        }
      }
      // Every other round, a torn write at the end: half a record of garbage after the last one.
      if (round % 2 === 1) {
        const files = fs.readdirSync(`${dir}/crash-0`).sort();
        fs.appendFileSync(
          `${dir}/crash-0/${files[files.length - 1]}`,
          Buffer.from([0, 0, 0, 40, 1, 2, 3, 4, 5, 6]),
        );
      }
      const { partition, report } = Partition.open(dir, 'crash', 0, {
        ...defaultLogConfig,
        segmentBytesMax: SEGMENT_BYTES,
      });
      try {
        const records = await readAll(
          { read: (o, m) => partition.read(o, m), highWatermark: partition.highWatermark },
          0,
        ); // CRC-checked; throws on a corrupt record
        assert.equal(records.length, partition.highWatermark.value, 'offsets are contiguous from 0');
        for (const [offset, payload] of acknowledged) {
          assert.ok(records[offset]?.equals(payload), `round ${round}: acknowledged offset ${offset} intact`);
        }
        for (const [offset, r] of records.entries()) {
          assert.ok(parseSelfChecking(r), `round ${round}: offset ${offset} is a record some producer wrote`);
        }
        if (round % 2 === 1) assert.ok(report.cuts.length > 0, 'the torn tail was cut');
        const end = partition.highWatermark.value;
        const next = await partition.append(batchOf([selfCheckingPayload(9, 0, 3)]), AckPolicy.FORCED);
        assert.equal(next.baseOffset, end, 'the next append continues at the recovered end');
        acknowledged.set(end, selfCheckingPayload(9, 0, 3));
        nextSequence += 100_000;
      } finally {
        await partition.close();
      }
    }
  });
});
