import type { Clock, TimerHandle } from '@booblik/protocol';
import { FORCED_GATHER_MS_MAX, SYNCS_IN_FLIGHT_MAX } from './types.js';

/**
 * On an idle disk, holds a FORCED group for the producers just acknowledged to send again, so they
 * share the next barrier: until as many FORCED batches have arrived as were acknowledged, or
 * FORCED_GATHER_MS_MAX after their acknowledgement, whichever is first.
 */
export class ForcedGathering {
  /**
   * FORCED batches acknowledged whose producers are expected to send again soon (any FORCED arrival
   * counts against it: producers are not told apart), and when the last of them were acknowledged.
   */
  private returning = 0;
  private acknowledgedAtMs = 0;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    /** Called when a hold ends on the clock. */
    private readonly holdEnded: () => void,
  ) {}

  /** A timer runs: the writer is not idle. */
  get holding(): boolean {
    return this.timer !== undefined;
  }

  acknowledged(forced: number): void {
    if (forced === 0) return;
    this.returning += forced;
    this.acknowledgedAtMs = this.clock.now();
  }

  forcedArrived(): void {
    if (this.returning > 0) this.returning--;
  }

  /**
   * Whether the queue may be written as a group now. Batches that need no barrier go whenever a
   * barrier slot is free. A FORCED group adapts to how many FORCED producers wait: while barriers
   * run, another starts only for a group at least as large as all of theirs together (a burst that
   * earns its own barrier; anything smaller waits and joins the next); on an idle disk, it starts
   * once the producers just acknowledged are back, or FORCED_GATHER_MS_MAX after their
   * acknowledgement, whichever is first (a timer ends the hold). A lone producer never waits: it is
   * the one expected back.
   */
  groupMayStart(
    syncsInFlight: number,
    queuedForced: number,
    forcedInFlight: number,
    accepting: boolean,
    queueHalfFull: boolean,
  ): boolean {
    if (syncsInFlight >= SYNCS_IN_FLIGHT_MAX) return false;
    if (queuedForced === 0 || !accepting) return true;
    if (syncsInFlight > 0) return queuedForced >= forcedInFlight;
    if (this.returning === 0 || queueHalfFull) return true;
    const heldMs = this.clock.now() - this.acknowledgedAtMs;
    if (heldMs >= FORCED_GATHER_MS_MAX) {
      this.returning = 0; // they are not coming back soon: stop expecting them
      return true;
    }
    if (this.timer === undefined) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        this.holdEnded();
      }, FORCED_GATHER_MS_MAX - heldMs);
    }
    return false;
  }

  /** Ends a hold now (nobody else is coming); true if one was running. */
  stop(): boolean {
    if (this.timer === undefined) return false;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    return true;
  }
}
