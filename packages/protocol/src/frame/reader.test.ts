import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { frameBytesMax } from '../limits.js';
import { framed, framesOf, recordingSink } from '../test-support/frame-events.js';
import { requestFrameLimits, responseFrameLimits } from './header.js';
import { FrameReader } from './reader.js';
import type { FrameSink } from './splitter.js';

function collect(limits = requestFrameLimits, sharedBufferBytes?: number) {
  return { reader: new FrameReader(limits, { sharedBufferBytes }), ...recordingSink() };
}

/**
 * Feeds a stream as a socket would: each read fills at most what readTarget() offers, and at most
 * the next of `sizes` (cycled; 0 taken as "all that fits"). Returns the targets, in order.
 */
function feed(reader: FrameReader, sink: FrameSink, stream: Buffer, sizes: number[] = [0]): Buffer[] {
  const targets: Buffer[] = [];
  for (let at = 0, i = 0; at < stream.length; i++) {
    const target = reader.readTarget();
    targets.push(target);
    assert.ok(target.length > 0, 'a read is never offered an empty buffer');
    const wanted = sizes[i % sizes.length]! || target.length;
    const n = Math.min(wanted, target.length, stream.length - at);
    stream.copy(target, 0, at, at + n);
    at += n;
    reader.written(n, sink);
  }
  return targets;
}

const bodyArb = fc.uint8Array({ minLength: 8, maxLength: 300 });

describe('frame reader', () => {
  it('yields the same frames whatever the read sizes and buffer size (property)', () => {
    fc.assert(
      fc.property(
        fc.array(bodyArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(400)),
        fc.integer({ min: 4, max: 1024 }),
        (bodies, sizes, shared) => {
          const { reader, events, sink } = collect(requestFrameLimits, shared);
          feed(reader, sink, Buffer.concat(bodies.map(framed)), sizes.length > 0 ? sizes : [0]);
          assert.deepEqual(events, framesOf(bodies));
          assert.equal(reader.bufferedBytes, 0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a frame handed out is never written over by later reads (kept views stay as they were)', () => {
    const bodies = Array.from({ length: 400 }, (_, i) => Buffer.alloc(8 + (i % 50), i));
    const { reader, views, sink } = collect(requestFrameLimits, 1024);
    feed(reader, sink, Buffer.concat(bodies.map(framed)), [7, 300, 1, 64]);
    assert.equal(views.length, bodies.length);
    for (const [i, view] of views.entries()) assert.deepEqual(view, bodies[i], `frame ${i}`);
  });

  it('a frame larger than the shared buffer is read in place: one read offered room for all of it, no copy', () => {
    const body = Buffer.alloc(1024 * 1024, 3);
    const { reader, views, sink } = collect(responseFrameLimits);
    const targets = feed(reader, sink, framed(body));
    assert.equal(views.length, 1);
    assert.deepEqual(views[0], body);
    // The first read takes the head (into the shared buffer); the second is offered the rest at once.
    assert.equal(targets.length, 2);
    assert.equal(views[0]!.buffer, targets[1]!.buffer, 'the frame is the memory the second read filled');
  });

  it('after a large frame, frames as large are each read whole into a buffer of their own size, with no copy', () => {
    const bodies = Array.from({ length: 4 }, (_, i) => Buffer.alloc(256 * 1024, i + 1));
    const { reader, views, sink } = collect(responseFrameLimits);
    const targets = feed(reader, sink, Buffer.concat(bodies.map(framed)));
    assert.equal(views.length, 4);
    for (const [i, view] of views.entries()) assert.deepEqual(view, bodies[i]);
    // The first frame's head came in the shared buffer; each later one took exactly one read.
    assert.equal(targets.length, 2 + 3);
    for (const i of [1, 2, 3]) {
      assert.equal(views[i]!.buffer, targets[1 + i]!.buffer, `frame ${i} is the memory one read filled`);
      assert.equal(views[i]!.buffer.byteLength, 4 + 256 * 1024, `frame ${i} has a buffer of its size`);
    }
  });

  it('a frame larger than the one before it still arrives whole (its start moves to a larger buffer)', () => {
    const bodies = [
      Buffer.alloc(100_000, 1),
      Buffer.alloc(300_000, 2),
      Buffer.alloc(20, 3),
      Buffer.alloc(90_000, 4),
    ];
    const { reader, views, sink } = collect(responseFrameLimits);
    feed(reader, sink, Buffer.concat(bodies.map(framed)), [0, 70_000, 5]);
    assert.equal(views.length, 4);
    for (const [i, view] of views.entries()) assert.deepEqual(view, bodies[i], `frame ${i}`);
  });

  it('small frames read one at a time share one buffer, not an allocation each', () => {
    const bodies = Array.from({ length: 100 }, (_, i) => Buffer.alloc(20, i));
    const { reader, views, sink } = collect(responseFrameLimits);
    for (const body of bodies) feed(reader, sink, framed(body));
    assert.equal(new Set(views.map((v) => v.buffer)).size, 1);
  });

  it('a frame delivered one byte at a time arrives whole', () => {
    const body = Buffer.from('000300010000002a00000000', 'hex');
    const { reader, events, sink } = collect();
    feed(reader, sink, framed(body), [1]);
    assert.deepEqual(events, [{ frame: body.toString('hex') }]);
  });

  it('a frame shorter than its header is reported as short and the stream stays usable', () => {
    const { reader, events, sink } = collect();
    const good = Buffer.alloc(8, 1);
    feed(reader, sink, Buffer.concat([framed(Buffer.from([1, 2, 3])), framed(good)]));
    assert.deepEqual(events, [{ short: 3 }, { frame: good.toString('hex') }]);
    assert.equal(reader.dead, false);
  });

  for (const length of [0, -1, -2147483648, 2147483647, frameBytesMax + 1]) {
    it(`length ${length} kills the stream and nothing after it is read`, () => {
      const { reader, events, sink } = collect();
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(length, 0);
      feed(reader, sink, Buffer.concat([prefix, framed(Buffer.alloc(8))]));
      assert.deepEqual(events, [{ invalid: length }]);
      assert.equal(reader.dead, true);
      feed(reader, sink, framed(Buffer.alloc(8)));
      assert.equal(events.length, 1);
      assert.equal(reader.bufferedBytes, 0, 'what follows an invalid length is dropped, not kept');
    });
  }

  it('accepts a frame of exactly 8 MiB read in 64 KiB pieces', () => {
    const { reader, events, sink } = collect();
    feed(reader, sink, framed(Buffer.alloc(frameBytesMax, 7)), [65536]);
    assert.equal(events.length, 1);
  });

  it('a single flipped bit never throws or buffers beyond the frame limit (property)', () => {
    fc.assert(
      fc.property(
        fc.array(bodyArb, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.nat(7),
        fc.array(fc.nat(400)),
        (bodies, where, bit, sizes) => {
          const stream = Buffer.concat(bodies.map(framed));
          const at = where % stream.length;
          stream[at] = stream[at]! ^ (1 << bit);
          const { reader, sink } = collect();
          feed(reader, sink, stream, sizes.length > 0 ? sizes : [0]);
          assert.ok(reader.bufferedBytes <= 4 + frameBytesMax);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a report of more bytes than the last target offered', () => {
    const { reader, sink } = collect();
    const room = reader.readTarget().length;
    assert.throws(() => reader.written(room + 1, sink), /bytes written, expected 0\.\./);
  });
});
