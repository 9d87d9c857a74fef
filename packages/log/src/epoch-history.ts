/**
 * Epoch history file => (epoch:decimal " " startOffset:decimal "\n")*
 * Which primary's term (epoch) wrote which records: epoch E owns the records from its start offset
 * up to the next entry's start. A replica following a new primary compares histories to find where
 * the two logs diverged (Kafka's KIP-101 / KIP-279 leader epochs). Records before the first entry
 * (a log from before replication) are epoch 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EpochHistoryError } from './errors.js';
import { replaceFileDurably } from './fs-util.js';

/** The file's name in the partition directory. */
export const EPOCH_HISTORY_FILE = 'epochs';

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

/** The answer to "where does epoch E end here?" (KIP-279's OffsetsForLeaderEpoch). */
export interface EpochEnd {
  /** The largest epoch in the history at or below the one asked for; 0 when there is none. */
  epoch: number;
  /** The first offset after that epoch's records. */
  endOffset: number;
}

export class EpochHistory {
  private constructor(
    readonly file: string,
    private list: EpochEntry[],
  ) {}

  /**
   * Reads `<dir>/epochs` (missing: an empty history). Entries starting past `logEndOffset` are
   * dropped and the file rewritten (a crash came between a log truncation and this file's). A file
   * that does not parse, or whose epochs do not increase or starts go back, is EpochHistoryError.
   */
  static open(dir: string, logEndOffset: number): EpochHistory {
    const file = path.join(dir, EPOCH_HISTORY_FILE);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return new EpochHistory(file, []);
    }
    const entries = parse(file, text);
    const kept = entries.filter((e) => e.startOffset <= logEndOffset);
    const history = new EpochHistory(file, kept);
    if (kept.length !== entries.length) history.save();
    return history;
  }

  /** The newest epoch, 0 when the history is empty. */
  get latestEpoch(): number {
    return this.list.length > 0 ? this.list[this.list.length - 1]!.epoch : 0;
  }

  /** The entries, oldest first (a copy). */
  get entries(): readonly EpochEntry[] {
    return [...this.list];
  }

  /**
   * Records that the records from `startOffset` on belong to `epoch`; durable before it returns. No-op
   * when `epoch` is already the latest. Refused with RangeError when `epoch` is below the latest or
   * `startOffset` below the latest entry's start. A latest epoch that starts at the same offset holds
   * no record: the new entry replaces it (as Kafka's leader-epoch cache does).
   */
  begin(epoch: number, startOffset: number): void {
    checkWhole('epoch', epoch, 1);
    checkWhole('startOffset', startOffset, 0);
    const latest = this.list[this.list.length - 1];
    if (latest !== undefined && epoch === latest.epoch) return;
    if (latest !== undefined && epoch < latest.epoch) {
      throw new RangeError(`epoch: ${epoch}, expected >= the latest epoch ${latest.epoch}`);
    }
    if (latest !== undefined && startOffset < latest.startOffset) {
      throw new RangeError(
        `startOffset: ${startOffset}, expected >= ${latest.startOffset} (where epoch ${latest.epoch} starts)`,
      );
    }
    const next =
      latest !== undefined && latest.startOffset === startOffset ? this.list.slice(0, -1) : [...this.list];
    next.push({ epoch, startOffset });
    this.replace(next);
  }

  /** The epoch of the record at `offset`: that of the entry with the largest start at or below it; 0 if none. */
  epochAt(offset: number): number {
    const i = this.lastIndexWhere((e) => e.startOffset <= offset);
    return i < 0 ? 0 : this.list[i]!.epoch;
  }

  /**
   * The epoch of the record at `offset` and where the next epoch starts (null when it is the
   * latest): the records from `offset` up to that start are all of the one epoch.
   */
  spanAt(offset: number): { epoch: number; nextStartOffset: number | null } {
    const i = this.lastIndexWhere((e) => e.startOffset <= offset);
    return { epoch: i < 0 ? 0 : this.list[i]!.epoch, nextStartOffset: this.list[i + 1]?.startOffset ?? null };
  }

  /**
   * Where `epoch` ends in this log, as KIP-279 answers it: E is the largest epoch in the history at or
   * below `epoch`, and its end the start of the entry after E, or `logEndOffset` when E is the latest.
   * With no such entry (an empty history, or `epoch` below the first), E is 0, the records before
   * the first entry: `{ epoch: 0, endOffset: <first entry's start> }`, or `logEndOffset` when the
   * history is empty (every record is epoch 0 then).
   */
  endOf(epoch: number, logEndOffset: number): EpochEnd {
    const i = this.lastIndexWhere((e) => e.epoch <= epoch);
    const after = this.list[i + 1];
    return {
      epoch: i < 0 ? 0 : this.list[i]!.epoch,
      endOffset: after !== undefined ? after.startOffset : logEndOffset,
    };
  }

  /**
   * Takes `entries` (a history kept elsewhere: the store's, for a log restored on an empty disk) in
   * place of this one, which must be empty; durable before it returns. Entries that break the file's
   * rules (epochs that do not increase, starts that go back) are RangeError, and nothing changes.
   */
  adopt(entries: readonly EpochEntry[]): void {
    if (this.list.length > 0)
      throw new RangeError(`adopt: the history holds ${this.list.length} entries already`);
    let before: EpochEntry | undefined;
    for (const e of entries) {
      checkWhole('epoch', e.epoch, before === undefined ? 1 : before.epoch + 1);
      checkWhole('startOffset', e.startOffset, before?.startOffset ?? 0);
      before = e;
    }
    if (entries.length > 0)
      this.replace(entries.map((e) => ({ epoch: e.epoch, startOffset: e.startOffset })));
  }

  /** Drops the entries starting at or after `offset` (the log was cut there); durable before it returns. */
  truncateTo(offset: number): void {
    const kept = this.list.filter((e) => e.startOffset < offset);
    if (kept.length !== this.list.length) this.replace(kept);
  }

  private lastIndexWhere(predicate: (e: EpochEntry) => boolean): number {
    for (let i = this.list.length - 1; i >= 0; i--) if (predicate(this.list[i]!)) return i;
    return -1;
  }

  /** The file first, then memory: a refused write leaves the history as it was. */
  private replace(entries: EpochEntry[]): void {
    writeEntries(this.file, entries);
    this.list = entries;
  }

  private save(): void {
    writeEntries(this.file, this.list);
  }
}

function writeEntries(file: string, entries: readonly EpochEntry[]): void {
  replaceFileDurably(file, entries.map((e) => `${e.epoch} ${e.startOffset}\n`).join(''));
}

function parse(file: string, text: string): EpochEntry[] {
  const entries: EpochEntry[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else if (lines.length > 0) throw new EpochHistoryError(file, 'the last line is not ended (a torn write?)');
  for (let n = 0; n < lines.length; n++) {
    const where = `line ${n + 1}`;
    const match = /^(\d{1,15}) (\d{1,16})$/.exec(lines[n]!);
    if (match === null)
      throw new EpochHistoryError(
        file,
        `${where}: ${JSON.stringify(lines[n])}, expected "epoch startOffset"`,
      );
    const entry = { epoch: Number(match[1]), startOffset: Number(match[2]) };
    const before = entries[entries.length - 1];
    if (entry.epoch < 1 || (before !== undefined && entry.epoch <= before.epoch)) {
      throw new EpochHistoryError(file, `${where}: epoch ${entry.epoch}, expected > ${before?.epoch ?? 0}`);
    }
    if (before !== undefined && entry.startOffset < before.startOffset) {
      throw new EpochHistoryError(
        file,
        `${where}: start ${entry.startOffset}, expected >= ${before.startOffset} (the start of epoch ${before.epoch})`,
      );
    }
    if (!Number.isSafeInteger(entry.startOffset))
      throw new EpochHistoryError(file, `${where}: start out of range`);
    entries.push(entry);
  }
  return entries;
}

function checkWhole(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name}: ${value}, expected an integer >= ${min}`);
}
