/**
 * How much each check does. The normal suite (`npm test`) stays within minutes; `npm run soak`
 * (BOOBLIK_SOAK=1) runs the same checks for longer. Each number can also be set on its own through
 * the environment variable named beside it.
 */

const soak = process.env.BOOBLIK_SOAK === '1';

function count(variable: string, normal: number, long: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return soak ? long : normal;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${variable}: "${raw}", expected an integer >= 1`);
  return n;
}

export const budget = {
  soak,
  /** Kill-and-recover rounds of the crash check. */
  crashRounds: count('BOOBLIK_RELIABILITY_CRASH_ROUNDS', 20, 200),
  /** Frames the fuzzer sends (each followed by a METADATA on the same connection). */
  fuzzCases: count('BOOBLIK_RELIABILITY_FUZZ_CASES', 10_000, 200_000),
  /** Idle connections held open during the overload check. */
  idleConnections: count('BOOBLIK_RELIABILITY_IDLE_CONNECTIONS', 10_000, 10_000),
  /** Long fetches held during the overload check, one connection each. */
  heldFetches: count('BOOBLIK_RELIABILITY_HELD_FETCHES', 1_000, 1_000),
  /** Probe round trips timed while the overload runs. */
  overloadProbes: count('BOOBLIK_RELIABILITY_OVERLOAD_PROBES', 300, 6_000),
  /** Fill-the-disk, free-it cycles of the full-disk check. */
  fullDiskCycles: count('BOOBLIK_RELIABILITY_FULL_DISK_CYCLES', 3, 30),
  /** FORCED records acknowledged before each power cut of the power-cut check. */
  powerCutAcks: count('BOOBLIK_RELIABILITY_POWER_CUT_ACKS', 300, 10_000),
  /** Segments retention must remove while consumers read, before the retention check ends. */
  retentionRemovals: count('BOOBLIK_RELIABILITY_RETENTION_REMOVALS', 300, 20_000),
};

/**
 * The seed of every random choice in the suite: printed by each check, so a failure can be replayed
 * with BOOBLIK_RELIABILITY_SEED=<seed>.
 */
export const seed = (() => {
  const raw = process.env.BOOBLIK_RELIABILITY_SEED;
  if (raw !== undefined && raw !== '') {
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw new Error(`BOOBLIK_RELIABILITY_SEED: "${raw}", expected an integer`);
    return n >>> 0;
  }
  return (Math.random() * 2 ** 32) >>> 0;
})();
