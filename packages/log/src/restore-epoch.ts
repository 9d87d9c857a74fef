/**
 * A log restored on an empty disk continues at the end of its store's history: the records after
 * it (the active segment, and any closed one not yet uploaded) are lost, and the offsets they had
 * go to new records. A reader that kept a position past that end would read the new records as if
 * they followed the ones it had, silently. So the restore starts a new epoch there: a reader that
 * says which epoch it read last (FETCH v5) is told its records are gone, and where they started.
 */
import type { EpochHistory } from './epoch-history.js';
import type { StoredPast } from './fragment.js';
import type { Logger } from './logger.js';

/** What a restore did, for the caller's report. */
export interface RestoreEpoch {
  /** The new epoch; the records from `restoredAt` on are of it. */
  epoch: number;
  restoredAt: number;
  /**
   * The end of the range known to be lost, from the high watermark the store last recorded: records
   * in `restoredAt..lostEndOffset` were readable and are gone (later ones may have been too); null
   * when the store recorded none past `restoredAt`.
   */
  lostEndOffset: number | null;
}

/**
 * Takes the store's epoch history into an empty local one and begins the next epoch at
 * `restoredAt`; logs the offsets lost. Durable before it returns (the local `epochs` file).
 */
export function beginRestoreEpoch(
  epochs: EpochHistory,
  restoredAt: number,
  past: StoredPast,
  name: string,
  logger: Logger,
): RestoreEpoch {
  if (epochs.entries.length === 0) epochs.adopt(past.epochs.filter((e) => e.startOffset <= restoredAt));
  const newest = Math.max(epochs.latestEpoch, ...past.epochs.map((e) => e.epoch));
  const epoch = newest + 1;
  epochs.begin(epoch, restoredAt);
  const lostEndOffset =
    past.highWatermark !== null && past.highWatermark > restoredAt ? past.highWatermark : null;
  const lost =
    lostEndOffset === null
      ? `the store recorded no readable record past offset ${restoredAt}, but records written after its last update are lost`
      : `offsets ${restoredAt}..${lostEndOffset} were readable and are lost (the high watermark the store last recorded; records written after that are lost too)`;
  logger.warn(
    `${name}: restored from the store on an empty disk: offsets 0..${restoredAt} are read from it; ${lost}; ` +
      `new records from offset ${restoredAt} are epoch ${epoch}, so a reader past ${restoredAt} in an earlier epoch is told its records were lost`,
  );
  return { epoch, restoredAt, lostEndOffset };
}
