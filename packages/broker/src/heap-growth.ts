/**
 * How far V8 lets the old generation grow between major collections, chosen by the heap's size.
 *
 * A broker's heap is small: about 8 MiB live under a steady produce load. V8 sizes the next collection
 * of a heap that small so tightly that it starts one every 30 to 50 ms (about 110 major collections
 * in a W1 run of 13 million records, 175 over TLS), and their marking, sweeping and freeing of socket
 * buffers on other threads were a third to a half of the broker's user CPU. Letting a small heap grow
 * to five times its live size before the next one ends that (3 to 30 in the same run) for a few MiB
 * more of resident memory. A heap past SMALL_HEAP_BYTES gets V8's own growth back, so a large heap
 * never grows five-fold; it comes back below half of that. The figures are in docs/benchmarks.md.
 */

import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** Live heap at or under which a major collection is put off until the heap is five times it. */
export const SMALL_HEAP_BYTES = 32 * 2 ** 20;
/** The old generation's growth factor of a small heap, as V8's percent: 1 + 400/100 = 5x. */
export const SMALL_HEAP_GROWING_PERCENT = 400;
/** V8's own choice (its flag's default): a factor from its measured collection speed. */
const V8_OWN_GROWING_PERCENT = 0;

export type HeapGrowth = 'small' | 'own';

/** The growth the heap should have after a major collection left `liveBytes`, given what it has. */
export function heapGrowthFor(liveBytes: number, current: HeapGrowth): HeapGrowth {
  if (current === 'small') return liveBytes > SMALL_HEAP_BYTES ? 'own' : 'small';
  return liveBytes < SMALL_HEAP_BYTES / 2 ? 'small' : 'own';
}

export interface HeapGrowthSeams {
  setFlags: (flags: string) => void;
  liveBytes: () => number;
  /** Calls `afterMajorGc` after each major collection; returns a function that stops it. */
  onMajorGc: (afterMajorGc: () => void) => () => void;
}

export const nodeHeapGrowthSeams: HeapGrowthSeams = {
  setFlags: (flags) => v8.setFlagsFromString(flags),
  liveBytes: () => v8.getHeapStatistics().used_heap_size,
  onMajorGc: (afterMajorGc) => {
    const observer = new PerformanceObserver((list) => {
      const major = list
        .getEntries()
        .some(
          (e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR,
        );
      if (major) afterMajorGc();
    });
    observer.observe({ entryTypes: ['gc'] });
    return () => observer.disconnect();
  },
};

/** Gives the process's heap the growth of a small one now, and follows its size from then on. */
export function followHeapGrowth(seams: HeapGrowthSeams = nodeHeapGrowthSeams): () => void {
  let growth: HeapGrowth = 'small';
  const apply = (g: HeapGrowth) =>
    seams.setFlags(
      `--heap-growing-percent=${g === 'small' ? SMALL_HEAP_GROWING_PERCENT : V8_OWN_GROWING_PERCENT}`,
    );
  apply(growth);
  return seams.onMajorGc(() => {
    const next = heapGrowthFor(seams.liveBytes(), growth);
    if (next !== growth) apply(next);
    growth = next;
  });
}
