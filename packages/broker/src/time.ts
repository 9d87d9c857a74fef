/** The broker's time: tests drive both parts, the rest of the broker reads them from here. */
import { type Clock, systemClock } from '@booblik/protocol';

export interface BrokerTime {
  /** Waits and their deadlines: a held FETCH, a LIST watch, security's timers. */
  clock: Clock;
  /** Unix ms: token expiries are wall-clock times. */
  wallNowMs: () => number;
}

export const systemTime: BrokerTime = { clock: systemClock, wallNowMs: Date.now };
