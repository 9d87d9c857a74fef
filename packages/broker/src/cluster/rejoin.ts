import { type Clock, systemClock, type TimerHandle, unrefTimer } from '@booblik/protocol';

/** After a lost lease, try to join again this often until etcd takes us back. */
export const REJOIN_RETRY_MS = 1000;

/** What joining again does, for the member this broker is. */
export interface RejoinSteps<M> {
  join(): Promise<M>;
  joined(member: M): void;
  /** Whether the broker stopped being a member (closed, or left after a hand-off). */
  stopped(): boolean;
  /** A join that came through after the broker stopped: left again at once. */
  leave(member: M): void;
}

/**
 * Joins again after a lost lease: a try at once, then one every REJOIN_RETRY_MS until etcd takes
 * this broker back or it stops.
 */
export class Rejoin<M> {
  private timer: TimerHandle | undefined;

  constructor(
    private readonly steps: RejoinSteps<M>,
    private readonly clock: Clock = systemClock,
  ) {}

  start(): void {
    if (this.steps.stopped()) return;
    this.steps.join().then(
      (member) => {
        if (this.steps.stopped()) this.steps.leave(member);
        else this.steps.joined(member);
      },
      () => {
        this.timer = this.clock.setTimeout(() => this.start(), REJOIN_RETRY_MS);
        unrefTimer(this.timer);
      },
    );
  }

  /** Calls off the next try. */
  cancel(): void {
    this.clock.clearTimeout(this.timer);
  }
}
