import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { recordHeaderBytes } from '@booblik/protocol';
import fc from 'fast-check';
import { defaultLogConfig, type LogConfig } from './config.js';
import { OffsetOutOfRangeError } from './errors.js';
import { Partition } from './partition.js';
import { readAll } from './test-support/read-all.js';
import { batchOf, payloadsOf } from './test-support/records.js';

/** The whole log as a list: what every sequence of operations must leave behind. */
class Model {
  records: Buffer[] = []; // by offset; below logStart are removed
  segments: { base: number; bytes: number; count: number }[] = [{ base: 0, bytes: 0, count: 0 }];
  constructor(private readonly segmentBytesMax: number) {}

  get logStart(): number {
    return this.segments[0]!.base;
  }

  append(payloads: Buffer[]): void {
    for (const p of payloads) {
      const bytes = recordHeaderBytes + p.length;
      const active = this.segments[this.segments.length - 1]!;
      if (active.bytes + bytes > this.segmentBytesMax) {
        this.segments.push({ base: this.records.length, bytes: 0, count: 0 });
      }
      const s = this.segments[this.segments.length - 1]!;
      s.bytes += bytes;
      s.count++;
      this.records.push(p);
    }
  }

  retain(limit: number): void {
    let total = this.segments.reduce((n, s) => n + s.bytes, 0);
    while (this.segments.length > 1 && total > limit) total -= this.segments.shift()!.bytes;
  }
}

type Op =
  | { kind: 'append'; sizes: number[]; ack: 0 | 1 | 2 }
  | { kind: 'retain'; limit: number }
  | { kind: 'reopen' }
  | { kind: 'read'; at: number; maxBytes: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      sizes: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }),
      ack: fc.constantFrom(0 as const, 1 as const, 2 as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('retain' as const), limit: fc.integer({ min: 0, max: 400 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      at: fc.nat(),
      maxBytes: fc.integer({ min: 1, max: 300 }),
    }),
  },
);

describe('log against an in-memory model', () => {
  it('any sequence of append, roll, retention, reopen and read leaves exactly the model’s records', async () => {
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 68, max: 200 }),
        async (ops, cap) => {
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-model-'));
          const config: LogConfig = {
            ...defaultLogConfig,
            segmentBytesMax: cap,
            indexIntervalBytes: 40,
            tailCacheBytes: 256,
          };
          const model = new Model(cap);
          let p = Partition.open(dir, 't', 0, config).partition;
          try {
            for (const op of ops) {
              if (op.kind === 'append') {
                const payloads = op.sizes.map((size) => Buffer.alloc(size, ++counter & 0xff));
                const ack = await p.append(batchOf(payloads), op.ack);
                assert.equal(ack.baseOffset, model.records.length, 'base offset is the previous end');
                model.append(payloads);
              } else if (op.kind === 'retain') {
                const cfg = { ...config, retentionBytes: op.limit };
                await p.close();
                p = Partition.open(dir, 't', 0, cfg).partition;
                p.enforceRetention();
                model.retain(op.limit);
              } else if (op.kind === 'reopen') {
                await p.close();
                p = Partition.open(dir, 't', 0, config).partition;
              } else {
                const span = model.records.length - model.logStart + 1;
                const at = model.logStart + (op.at % span);
                const result = await p.read(at, op.maxBytes);
                assert.ok(result.bytes <= op.maxBytes);
                const got = payloadsOf(result.chunks, at);
                assert.deepEqual(got, model.records.slice(at, at + got.length), `read at ${at}`);
              }
              assert.equal(p.highWatermark.value, model.records.length, 'high watermark');
              assert.equal(p.logStartOffset, model.logStart, 'log start');
              assert.equal(p.segmentCount, model.segments.length, 'segments');
            }
            if (model.logStart > 0)
              await assert.rejects(p.read(model.logStart - 1, 10), OffsetOutOfRangeError);
            assert.deepEqual(
              await readAll({ read: (o, m) => p.read(o, m), highWatermark: p.highWatermark }, model.logStart),
              model.records.slice(model.logStart),
            );
          } finally {
            await p.close();
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
