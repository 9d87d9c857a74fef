import type { StateMoves } from './replication-rules.js';

/**
 * live: learning, copying or following the replica; paused: after a failure, until the retry timer
 * fires (a failure of another request on its way meanwhile pauses it again, for longer); stopped.
 */
export type StreamState = 'live' | 'paused' | 'stopped';

export const STREAM_MOVES: StateMoves<StreamState> = {
  live: ['paused', 'stopped'],
  paused: ['paused', 'live', 'stopped'],
  stopped: [],
};

/**
 * The step on its way, whatever the state (a failure probes at once, paused): idle; probing: an
 * empty request at the primary's end, to learn where the replica's log stands; truncating: a cut of
 * its divergent tail; reading: records read from the log to copy to it. While a step is on its way
 * nothing else starts and new write groups are held to follow it.
 */
export type StreamStep = 'idle' | 'probing' | 'truncating' | 'reading';

export const STEP_MOVES: StateMoves<StreamStep> = {
  idle: ['probing', 'truncating', 'reading'],
  probing: ['idle'],
  truncating: ['idle'],
  reading: ['idle'],
};
