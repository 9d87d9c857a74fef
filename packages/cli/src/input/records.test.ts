import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { InputError } from '../errors.js';
import { readLengthPrefixed, readLines, recordBytesMaxFor } from './records.js';

async function collect(gen: AsyncGenerator<Buffer>): Promise<string[]> {
  const out: string[] = [];
  for await (const r of gen) out.push(r.toString('latin1'));
  return out;
}

async function* chunks(parts: (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p, 'latin1') : p;
}

/** Cuts a buffer at the given points, so records arrive split anywhere. */
function cutAt(whole: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (whole.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...at, whole.length]) {
    out.push(whole.subarray(prev, p));
    prev = p;
  }
  return out;
}

function prefixed(records: Buffer[]): Buffer {
  return Buffer.concat(
    records.flatMap((r) => {
      const len = Buffer.alloc(4);
      len.writeInt32BE(r.length, 0);
      return [len, r];
    }),
  );
}

describe('stdin records', () => {
  it('lines: a line split across chunks comes back whole; a last line without newline counts', async () => {
    assert.deepEqual(await collect(readLines(chunks(['ab', 'c\nde', 'f\n\ng\r\n', 'h']))), [
      'abc',
      'def',
      '',
      'g\r',
      'h',
    ]);
  });

  it('lines: any chunking yields the same records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: fc.constantFrom('a', 'b', '\r', '\u00e9') }), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (lines, points) => {
          const whole = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'latin1');
          assert.deepEqual(await collect(readLines(chunks(cutAt(whole, points)))), lines);
        },
      ),
    );
  });

  it('lines: a line longer than a record can hold is refused instead of buffered without end', async () => {
    await assert.rejects(
      collect(readLines(chunks(['ok\n', '12345', '678\n']), 7)),
      /line 2 is longer than 7/,
    );
  });

  it('length-prefixed: any chunking yields the same records, zero-length ones included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 20 }), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (records, points) => {
          const bufs = records.map((r) => Buffer.from(r));
          const got = await collect(readLengthPrefixed(chunks(cutAt(prefixed(bufs), points))));
          assert.deepEqual(
            got,
            bufs.map((b) => b.toString('latin1')),
          );
        },
      ),
    );
  });

  it('length-prefixed: input ending inside a record is an error, never a short record', async () => {
    const whole = prefixed([Buffer.from('abc'), Buffer.from('defg')]);
    await assert.rejects(
      collect(readLengthPrefixed(chunks([whole.subarray(0, whole.length - 1)]))),
      (e: unknown) => e instanceof InputError && /record 2: 3 of its 4 bytes/.test(e.message),
    );
    await assert.rejects(
      collect(readLengthPrefixed(chunks([whole.subarray(0, 9)]))),
      /length prefix of record 2/,
    );
  });

  it('length-prefixed: a negative or oversized length is refused before anything is buffered', async () => {
    await assert.rejects(collect(readLengthPrefixed(chunks([Buffer.from([0xff, 0xff, 0xff, 0xff])]))), /-1/);
    await assert.rejects(
      collect(readLengthPrefixed(chunks([prefixed([Buffer.alloc(9)])]), 8)),
      /length prefix 9/,
    );
  });

  it('the most a record can hold is exact: what a FETCH answer returns whole, less for a long topic name', () => {
    // 8 MiB frame - 6 (answer header) - 24 (FETCH v5's fields) - 8 (record header).
    assert.equal(recordBytesMaxFor('t'), 8_388_570);
    assert.equal(recordBytesMaxFor('default'), 8_388_570);
    // A long name makes the PRODUCE frame bind first: 8 MiB - 8 (request header) - (2 + name) topic
    // - 4 - 1 - 4 - 4 (record size).
    assert.equal(recordBytesMaxFor('x'.repeat(60)), 8_388_608 - 8 - (2 + 60) - 4 - 1 - 4 - 4);
    assert.equal(recordBytesMaxFor('заказы'.repeat(5)), 8_388_608 - 8 - (2 + 60) - 4 - 1 - 4 - 4);
  });
});
