import {
  CorruptRecordError,
  OffsetMismatchError,
  type Partition,
  StorageError,
  TruncationRefusedError,
} from '@booblik/log';
import { ErrorCode, type ReplicateAnswer, ReplicateFlag, type ReplicateRequest } from '@booblik/protocol';
import { checkEpochRises } from './replication-rules.js';

/**
 * A replicated partition as one of its replicas: takes REPLICATE from the primary of the latest epoch
 * it knows and refuses the rest (STALE_EPOCH), so a replaced primary can never have a write
 * acknowledged here. Writes the primary's bytes at the primary's offsets, after the check that both
 * logs agree up to there (the end and the epoch of the record before it), and serves nothing beyond
 * the commit offset the primary sends.
 *
 *   request epoch < known            -> STALE_EPOCH
 *   TRUNCATE                         -> the log cut back to baseOffset (where it diverged)
 *   baseOffset/prevEpoch disagree    -> OFFSET_MISMATCH, with this end and last epoch
 *   records                          -> CRCs checked, written, fdatasync'ed if FORCED
 *   no records                       -> a heartbeat: the commit offset moves
 */
export class ReplicaSide {
  /**
   * The epoch whose primary last sent this side a commit offset (-1: none since it was made). Reads
   * are served here only in that epoch: a replica just restarted, or following a new primary it has
   * not heard from yet, sends readers elsewhere rather than show a high watermark it has not learnt.
   */
  private committedBy = -1;

  constructor(
    readonly partition: Partition,
    private known: number,
    /**
     * A primary stepping down knows its own commit offset in its epoch: it may serve what it
     * published until a later primary's record shows up.
     */
    committedIn = -1,
  ) {
    this.committedBy = committedIn;
  }

  /** Whether the primary of `epoch` has told this side its commit offset (reads may be served here). */
  hasCommitFrom(epoch: number): boolean {
    return this.committedBy === epoch;
  }

  get knownEpoch(): number {
    return this.known;
  }

  /** The cluster's record names a later epoch: groups of older primaries are refused from now on. */
  learnEpoch(epoch: number): void {
    if (epoch > this.known) this.raiseEpoch(epoch);
  }

  /** The one place the known epoch changes: it only rises. */
  private raiseEpoch(epoch: number): void {
    checkEpochRises(this.partition.name, this.known, epoch);
    this.known = epoch;
  }

  handle(req: ReplicateRequest): ReplicateAnswer | Promise<ReplicateAnswer> {
    if (req.epoch < this.known) return this.answer(ErrorCode.STALE_EPOCH);
    if (req.epoch > this.known) this.raiseEpoch(req.epoch);
    const p = this.partition;
    if ((req.flags & ReplicateFlag.TRUNCATE) !== 0) {
      if (req.baseOffset < p.logEndOffset) {
        try {
          p.truncateTo(req.baseOffset);
        } catch (error) {
          if (error instanceof TruncationRefusedError) return this.answer(ErrorCode.OFFSET_MISMATCH);
          throw error;
        }
      }
      return this.answer(ErrorCode.NONE);
    }
    const end = p.logEndOffset;
    if (req.baseOffset !== end) return this.answer(ErrorCode.OFFSET_MISMATCH);
    if (!this.onlyStoreHistory && this.epochBefore(end) !== req.prevEpoch)
      return this.answer(ErrorCode.OFFSET_MISMATCH);
    if (req.count === 0) {
      p.publishCommitted(Math.min(req.commitOffset, end));
      this.committedBy = req.epoch;
      return this.answer(ErrorCode.NONE);
    }
    if (req.recordsEpoch > p.epochs.latestEpoch) p.epochs.begin(req.recordsEpoch, req.baseOffset);
    let written: Promise<void>;
    try {
      written = p.writeReplicated(
        req.baseOffset,
        req.stored,
        req.count,
        (req.flags & ReplicateFlag.FORCED) !== 0,
      );
    } catch (error) {
      return this.answer(codeOf(error));
    }
    p.publishCommitted(Math.min(req.commitOffset, p.logEndOffset));
    this.committedBy = req.epoch;
    // Answered once written (and on stable storage when FORCED); answers leave in request order.
    return written.then(
      () => this.answer(ErrorCode.NONE),
      (error: unknown) => this.answer(codeOf(error)),
    );
  }

  /**
   * Everything here came from the topic's store (a disk emptied, then restored): persisted segments
   * were committed, so they agree with any primary, whose epochs this log never learnt.
   */
  private get onlyStoreHistory(): boolean {
    const p = this.partition;
    return p.logEndOffset > 0 && p.logEndOffset === p.localStartOffset && p.epochs.entries.length === 0;
  }

  private epochBefore(offset: number): number {
    return offset === 0 ? 0 : this.partition.epochs.epochAt(offset - 1);
  }

  private answer(code: number): ReplicateAnswer {
    const end = this.partition.logEndOffset;
    // A log of store history alone claims the latest epoch it knows: nothing of it is ever cut.
    const lastEpoch = this.onlyStoreHistory ? this.known : this.epochBefore(end);
    return { code, logEndOffset: end, lastEpoch, knownEpoch: this.known };
  }
}

function codeOf(error: unknown): number {
  if (error instanceof CorruptRecordError) return ErrorCode.CORRUPT_REQUEST;
  if (error instanceof OffsetMismatchError) return ErrorCode.OFFSET_MISMATCH;
  if (error instanceof StorageError) return ErrorCode.STORAGE_ERROR;
  throw error;
}
