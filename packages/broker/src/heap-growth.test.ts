import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  followHeapGrowth,
  type HeapGrowthSeams,
  heapGrowthFor,
  nodeHeapGrowthSeams,
  SMALL_HEAP_BYTES,
} from './heap-growth.js';

const MiB = 2 ** 20;

/** Seams whose major collections the test runs by hand, leaving `live` bytes. */
function fakeSeams() {
  const flags: string[] = [];
  let afterMajorGc: (() => void) | null = null;
  let stopped = false;
  const state = { live: 8 * MiB };
  const seams: HeapGrowthSeams = {
    setFlags: (f) => flags.push(f),
    liveBytes: () => state.live,
    onMajorGc: (fn) => {
      afterMajorGc = fn;
      return () => {
        stopped = true;
      };
    },
  };
  const majorGcLeaving = (live: number) => {
    state.live = live;
    afterMajorGc!();
  };
  return { seams, flags, majorGcLeaving, stopped: () => stopped };
}

describe('heap growth by heap size', () => {
  it('a broker starts with five-fold growth, so its small heap is not collected every few tens of ms', () => {
    const f = fakeSeams();
    followHeapGrowth(f.seams);
    assert.deepEqual(f.flags, ['--heap-growing-percent=400']);
  });

  it("a heap past the small size gets V8's own growth back at its next major collection", () => {
    const f = fakeSeams();
    followHeapGrowth(f.seams);
    f.majorGcLeaving(SMALL_HEAP_BYTES - 1);
    assert.deepEqual(f.flags, ['--heap-growing-percent=400'], 'no change while still small');
    f.majorGcLeaving(SMALL_HEAP_BYTES + 1);
    assert.deepEqual(f.flags.at(-1), '--heap-growing-percent=0');
  });

  it('a large heap that shrinks goes back to five-fold growth only below half the small size', () => {
    const f = fakeSeams();
    followHeapGrowth(f.seams);
    f.majorGcLeaving(200 * MiB);
    f.majorGcLeaving(SMALL_HEAP_BYTES - MiB);
    assert.equal(f.flags.length, 2, 'just under the size it does not flap back');
    f.majorGcLeaving(SMALL_HEAP_BYTES / 2 - 1);
    assert.deepEqual(f.flags, [
      '--heap-growing-percent=400',
      '--heap-growing-percent=0',
      '--heap-growing-percent=400',
    ]);
  });

  it('the decision alone: small stays small up to the size, own stays own down to half of it', () => {
    assert.equal(heapGrowthFor(SMALL_HEAP_BYTES, 'small'), 'small');
    assert.equal(heapGrowthFor(SMALL_HEAP_BYTES + 1, 'small'), 'own');
    assert.equal(heapGrowthFor(SMALL_HEAP_BYTES / 2, 'own'), 'own');
    assert.equal(heapGrowthFor(SMALL_HEAP_BYTES / 2 - 1, 'own'), 'small');
  });

  it("Node's own seams see a major collection and read the live heap", async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let seen = 0;
    const stop = nodeHeapGrowthSeams.onMajorGc(() => seen++);
    try {
      const deadline = Date.now() + 10_000;
      while (seen === 0 && Date.now() < deadline) {
        gc();
        await new Promise((r) => setImmediate(r));
      }
      assert.ok(seen > 0, 'no major collection was reported within 10 s');
      assert.ok(nodeHeapGrowthSeams.liveBytes() > 0);
    } finally {
      stop();
    }
  });
});
