import { AckPolicy, invariant } from '@booblik/protocol';
import type { Group, GroupState } from './types.js';

export type { GroupState };

/**
 * Where one written group is, from its write to its answer:
 *
 *   written ──barrier started──> syncing ──done──> durable ─┬──────────────> answered
 *      │                            │                       └─> gated ─────> answered
 *      └──no barrier asked──> durable    └──failed──> failed ─┬────────────> answered
 *                                                            └─> gated ───> answered
 *
 * `durable`: nothing more is asked of this disk (its barrier is done, or it asked for none).
 * `failed`: its barrier failed; its FORCED members are refused, the rest are answered as written.
 * `gated`: done with the disk, written under a replication gate, and held there until `commitTo`
 * covers it. `answered`: published (a primary's) and every member told. A group is answered in
 * write order, only from durable, failed, or gated once committed.
 */

export const GROUP_STATES: readonly GroupState[] = [
  'written',
  'syncing',
  'durable',
  'failed',
  'gated',
  'answered',
];

export const GROUP_MOVES: Readonly<Record<GroupState, readonly GroupState[]>> = {
  written: ['syncing', 'durable'],
  syncing: ['durable', 'failed'],
  durable: ['gated', 'answered'],
  failed: ['gated', 'answered'],
  gated: ['answered'],
  answered: [],
};

/** Throws InvariantError, state unchanged, unless `to` may follow `group.state`. */
export function moveGroup(
  name: string,
  group: { state: GroupState; endOffset: number },
  to: GroupState,
): void {
  const from = group.state;
  invariant(
    GROUP_MOVES[from].includes(to),
    () => `${name}: a group ending at ${group.endOffset} may not go from ${from} to ${to}`,
  );
  group.state = to;
}

/** Done with the disk, and held by every in-sync replica when it was written under a gate. */
export function mayBeAnswered(group: Group, committedOffset: number): boolean {
  const { state } = group;
  return (
    state === 'durable' || state === 'failed' || (state === 'gated' && group.endOffset <= committedOffset)
  );
}

/** Tells each member of a group being answered: a failed barrier refuses only those who asked for it. */
export function answerMembers(group: Group): void {
  for (let i = 0; i < group.members.length; i++) {
    const p = group.members[i]!;
    // The records are in the log either way.
    if (group.syncError !== null && p.ack === AckPolicy.FORCED) p.waiter.failed(group.syncError);
    else p.waiter.appended(group.bases[i]!, group.endOffset);
  }
}
