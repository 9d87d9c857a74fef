import { invariant } from '@booblik/protocol';

/**
 * The writer's lifecycle. `accepting`: batches are taken. `closing`: `close` was called; nothing new
 * is taken, what was taken is written, acknowledged and flushed. `closed`: all of that is done.
 * A writer never goes back to an earlier state.
 */
export type WriterState = 'accepting' | 'closing' | 'closed';

const allowed: Readonly<Record<WriterState, readonly WriterState[]>> = {
  accepting: ['closing'],
  closing: ['closed'],
  closed: [],
};

/** Holds one writer's state; every change goes through `moveTo`, which refuses what is not allowed. */
export class WriterLifecycle {
  private current: WriterState = 'accepting';

  constructor(private readonly name: string) {}

  get state(): WriterState {
    return this.current;
  }

  /** Throws InvariantError, state unchanged, unless `to` may follow the current state. */
  moveTo(to: WriterState): void {
    const from = this.current;
    invariant(allowed[from].includes(to), () => `${this.name}: writer may not go from ${from} to ${to}`);
    this.current = to;
  }

  /** Throws InvariantError unless the writer is in `expected` (for paths that only it may take). */
  mustBe(expected: WriterState): void {
    invariant(
      this.current === expected,
      () => `${this.name}: writer is ${this.current}, expected ${expected}`,
    );
  }
}

/**
 * Who decides the offsets: a primary's writer assigns them (`append`), a replica's takes them from
 * the primary (`writeReplica`, at the log end). A writer holds the work of one mode at a time; it
 * changes mode only once nothing of the other mode waits for an answer.
 */
export type WriterMode = 'primary' | 'replica';

/** A write of one mode offered while the writer still holds work of the other: refused, nothing stored. */
export class WriterModeError extends Error {
  override name = 'WriterModeError';

  constructor(name: string, offered: WriterMode, holding: WriterMode) {
    super(`${name}: a ${offered} write was offered while the writer still holds ${holding} writes; refused`);
  }
}
