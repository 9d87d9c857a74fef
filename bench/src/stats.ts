/** Small statistics for benchmark reports: every figure is quoted as min, median and max of its runs. */

export interface Spread {
  min: number;
  median: number;
  max: number;
  runs: number;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('spread of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]!, runs: sorted.length };
}

/** The q-quantile (0..1) of values, by nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
