import { AckPolicy } from '@booblik/protocol';
import type { AppendWaiter, Group } from './types.js';

/** A replica's FORCED writes, in the log already and waiting for a barrier: the next group to sync. */
export class ReplicaForcedWrites {
  private written: { baseOffset: number; waiter: AppendWaiter }[] = [];

  get count(): number {
    return this.written.length;
  }

  add(baseOffset: number, waiter: AppendWaiter): void {
    this.written.push({ baseOffset, waiter });
  }

  /** All of them as one group ending at `endOffset` (the log end), to be covered by one barrier. */
  takeGroup(endOffset: number): Group {
    const written = this.written;
    this.written = [];
    return {
      members: written.map(({ waiter }) => ({ ack: AckPolicy.FORCED, waiter })),
      bases: written.map((w) => w.baseOffset),
      endOffset,
      forced: written.length,
      state: 'written',
      syncError: null,
      underGate: false,
      replica: true,
    };
  }
}
