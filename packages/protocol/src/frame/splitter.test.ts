import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { frameBytesMax } from '../limits.js';
import { framed, framesOf, recordingSink } from '../test-support/frame-events.js';
import { requestFrameLimits, responseFrameLimits } from './header.js';
import { type FrameSink, FrameSplitter } from './splitter.js';

function collect(limits = requestFrameLimits) {
  return { splitter: new FrameSplitter(limits), ...recordingSink() };
}

/** Cuts a stream at the given points (sorted, deduplicated, inside the stream). */
function cut(stream: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (stream.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let prev = 0;
  for (const p of [...at, stream.length]) {
    if (p > prev) pieces.push(stream.subarray(prev, p));
    prev = Math.max(prev, p);
  }
  return pieces;
}

const bodyArb = fc.uint8Array({ minLength: 8, maxLength: 300 });

describe('frame splitter', () => {
  it('yields the same frames whatever the chunking (property)', () => {
    fc.assert(
      fc.property(
        fc.array(bodyArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat()),
        (bodies, points) => {
          const stream = Buffer.concat(bodies.map(framed));
          const { splitter, events, sink } = collect();
          for (const piece of cut(stream, points)) splitter.push(piece, sink);
          assert.deepEqual(events, framesOf(bodies));
          assert.equal(splitter.bufferedBytes, 0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a frame delivered one byte at a time arrives whole', () => {
    const body = Buffer.from('000300010000002a00000000', 'hex');
    const { splitter, events, sink } = collect();
    for (const byte of framed(body)) splitter.push(Buffer.from([byte]), sink);
    assert.deepEqual(events, [{ frame: body.toString('hex') }]);
  });

  it('many frames in one chunk each arrive, in order', () => {
    const bodies = Array.from({ length: 100 }, (_, i) => Buffer.alloc(8 + (i % 5), i));
    const { splitter, events, sink } = collect();
    splitter.push(Buffer.concat(bodies.map(framed)), sink);
    assert.equal(events.length, 100);
    assert.deepEqual(events[99], { frame: bodies[99]!.toString('hex') });
  });

  it('a frame shorter than its header is reported as short and the stream stays usable', () => {
    const { splitter, events, sink } = collect();
    const good = Buffer.alloc(8, 1);
    splitter.push(Buffer.concat([framed(Buffer.from([1, 2, 3])), framed(good)]), sink);
    assert.deepEqual(events, [{ short: 3 }, { frame: good.toString('hex') }]);
    assert.equal(splitter.dead, false);
  });

  for (const length of [0, -1, -2147483648, 2147483647, frameBytesMax + 1]) {
    it(`length ${length} kills the stream and nothing after it is read`, () => {
      const { splitter, events, sink } = collect();
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(length, 0);
      splitter.push(Buffer.concat([prefix, framed(Buffer.alloc(8))]), sink);
      assert.deepEqual(events, [{ invalid: length }]);
      assert.equal(splitter.dead, true);
      splitter.push(framed(Buffer.alloc(8)), sink);
      assert.equal(events.length, 1);
    });
  }

  it('accepts a frame of exactly 8 MiB and buffers it across chunks', () => {
    const body = Buffer.alloc(frameBytesMax, 7);
    const { splitter, events, sink } = collect();
    const stream = framed(body);
    for (let at = 0; at < stream.length; at += 65536) splitter.push(stream.subarray(at, at + 65536), sink);
    assert.equal(events.length, 1);
  });

  it('responses: a length below 6 is refused as impossible, not treated as short', () => {
    const { splitter, events, sink } = collect(responseFrameLimits);
    splitter.push(framed(Buffer.alloc(5)), sink);
    assert.deepEqual(events, [{ invalid: 5 }]);
  });

  it('a single flipped bit never throws or buffers beyond the frame limit (property)', () => {
    fc.assert(
      fc.property(
        fc.array(bodyArb, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.nat(7),
        fc.array(fc.nat()),
        (bodies, where, bit, points) => {
          const stream = Buffer.concat(bodies.map(framed));
          const at = where % stream.length;
          stream[at] = stream[at]! ^ (1 << bit);
          const { splitter, sink } = collect();
          for (const piece of cut(stream, points)) splitter.push(piece, sink);
          assert.ok(splitter.bufferedBytes <= frameBytesMax);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a sink that pauses after every frame gets them all, in order, one resume at a time (property)', () => {
    fc.assert(
      fc.property(
        fc.array(bodyArb, { minLength: 1, maxLength: 10 }),
        fc.array(fc.nat()),
        (bodies, points) => {
          const got: string[] = [];
          const splitter = new FrameSplitter(requestFrameLimits);
          const sink: FrameSink = {
            frame: (f) => {
              got.push(Buffer.from(f).toString('hex'));
              return false;
            },
            shortFrame: () => assert.fail('no short frames here'),
            invalidLength: () => assert.fail('no invalid lengths here'),
          };
          for (const piece of cut(Buffer.concat(bodies.map(framed)), points)) {
            const before = got.length;
            splitter.push(piece, sink);
            assert.ok(got.length - before <= 1, 'nothing is delivered while paused');
          }
          while (splitter.isPaused) splitter.resume(sink);
          assert.deepEqual(
            got,
            bodies.map((b) => Buffer.from(b).toString('hex')),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the caller may reuse its chunk after push: gathered pieces are copied', () => {
    const body = Buffer.alloc(16, 9);
    const stream = framed(body);
    const { splitter, events, sink } = collect();
    const chunk = Buffer.from(stream.subarray(0, 10));
    splitter.push(chunk, sink);
    chunk.fill(0);
    splitter.push(Buffer.from(stream.subarray(10)), sink);
    assert.deepEqual(events, [{ frame: body.toString('hex') }]);
  });
});
