import type { Clock, TimerHandle } from '../clock.js';

interface Timer {
  at: number;
  seq: number;
  callback: () => void;
  cancelled: boolean;
}

/** A clock that moves only when a test says so: linger and backoff tests never sleep. */
export class ManualClock implements Clock {
  private time = 0;
  private seq = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer: Timer = {
      at: this.time + Math.max(0, delayMs),
      seq: this.seq++,
      callback,
      cancelled: false,
    };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    if (handle) (handle as Timer).cancelled = true;
  }

  /** Timers set and neither fired nor cleared. */
  get pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** The delays (from now) of the pending timers, soonest first. */
  get pendingDelays(): number[] {
    return this.timers
      .filter((t) => !t.cancelled)
      .map((t) => t.at - this.time)
      .sort((a, b) => a - b);
  }

  /** Moves time forward, firing every timer that falls due, in order (timers they set included). */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.time = due.at;
      due.cancelled = true;
      due.callback();
    }
    this.time = target;
  }
}
