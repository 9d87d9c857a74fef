import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { Output } from './io.js';

/** A pipe that takes one byte-sized chunk at a time and drains on the next turn: every write waits. */
function slowPipe(): { stream: Writable; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString());
      setImmediate(callback);
    },
  });
  return { stream, written };
}

describe('Output', () => {
  it('many waits for drain on a slow pipe leave no listener behind (no MaxListenersExceededWarning)', async () => {
    const { stream, written } = slowPipe();
    const baseline = { close: stream.listenerCount('close'), drain: stream.listenerCount('drain') };
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const out = new Output(stream);
      for (let i = 0; i < 50; i++) assert.equal(await out.write(`${i}\n`), true);
      assert.equal(written.length, 50);
      assert.deepEqual(
        { close: stream.listenerCount('close'), drain: stream.listenerCount('drain') },
        baseline,
      );
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on a later turn
      assert.deepEqual(
        warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('writers held back together share one wait and all resume', async () => {
    const { stream, written } = slowPipe();
    const out = new Output(stream);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => out.write(`${i}`)));
    assert.deepEqual(results, Array(20).fill(true));
    assert.equal(written.length, 20);
    assert.ok(stream.listenerCount('drain') <= 1);
  });

  it('a reader gone away (EPIPE) makes write() answer false, never throw', async () => {
    const stream = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const out = new Output(stream);
    assert.equal(await out.write('a\n'), false);
    assert.equal(await out.write('b\n'), false);
    assert.equal(out.open, false);
  });

  it('another write error is the caller error, not a crash of the process', async () => {
    const stream = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('write EIO'), { code: 'EIO' }));
      },
    });
    const out = new Output(stream);
    await assert.rejects(out.write('a\n'), /EIO/);
  });
});
