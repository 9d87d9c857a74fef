import { invariant } from '@booblik/protocol';

/** For each state of a class, the states it may move to: anything else is a bug. */
export type StateMoves<S extends string> = Readonly<Record<S, readonly S[]>>;

/** Returns `to` if `moves` allows `from -> to`; else throws an InvariantError naming `what`. */
export function checkedMove<S extends string>(what: string, moves: StateMoves<S>, from: S, to: S): S {
  invariant(moves[from].includes(to), () => `${what}: ${from} -> ${to} is not a move of its states`);
  return to;
}

/**
 * A primary's new commit offset: it never goes back (a reader would see acknowledged records vanish),
 * never passes its log end, and never passes what any in-sync replica acknowledged (a failover to that
 * replica would lose records acknowledged here).
 */
export function checkCommitMove(
  name: string,
  from: number,
  to: number,
  logEnd: number,
  inSyncAcked: readonly { member: string; ackedEnd: number }[],
): void {
  invariant(to >= from, () => `${name}: commit offset would go back from ${from} to ${to}`);
  invariant(to <= logEnd, () => `${name}: commit offset ${to} would pass the log end ${logEnd}`);
  for (const r of inSyncAcked) {
    invariant(
      r.ackedEnd >= to,
      () => `${name}: commit offset ${to} would pass what in-sync ${r.member} acknowledged (${r.ackedEnd})`,
    );
  }
}

/** The in-sync set always holds its primary: it is the one copy certain to have every record. */
export function checkInSyncHoldsPrimary(name: string, primary: string, isr: readonly string[]): void {
  invariant(
    isr.includes(primary),
    () => `${name}: in-sync set [${isr.join(', ')}] lacks its primary ${primary}`,
  );
}

/** Epochs only rise: a primary of an older epoch than the log has seen would overwrite a newer one's. */
export function checkEpochRises(name: string, known: number, next: number): void {
  invariant(next >= known, () => `${name}: epoch would go back from ${known} to ${next}`);
}

/**
 * A partition is primary or replica here, never both: a new role replaces a primary only once its
 * pipeline stopped (else two writers of one epoch would stream from one log).
 */
export function checkOneRole(name: string, primaryBefore: string | null): void {
  invariant(
    primaryBefore === null || primaryBefore === 'stopped',
    () => `${name}: a new role while its primary pipeline is still ${primaryBefore}`,
  );
}
