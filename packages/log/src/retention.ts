/** What retention weighs of a segment, local or in a store. */
export interface RetainedSegment {
  readonly sizeBytes: number;
  readonly lastWriteMs: number;
}

export interface RetentionLimits {
  /** -1: unlimited. */
  bytes: number;
  /** -1: unlimited. */
  ms: number;
}

/**
 * How many of `segments` (oldest first) go: while they hold more than `limits.bytes`, or while the
 * oldest was last written longer than `limits.ms` ago, and only as long as `mayGo` allows the next.
 */
export function expiredPrefix(
  segments: readonly RetainedSegment[],
  totalBytes: number,
  limits: RetentionLimits,
  nowMs: number,
  mayGo: (index: number) => boolean,
): number {
  let total = totalBytes;
  let n = 0;
  while (n < segments.length && mayGo(n)) {
    const oldest = segments[n]!;
    const overBytes = limits.bytes >= 0 && total > limits.bytes;
    const overAge = limits.ms >= 0 && nowMs - oldest.lastWriteMs > limits.ms;
    if (!overBytes && !overAge) break;
    total -= oldest.sizeBytes;
    n++;
  }
  return n;
}
