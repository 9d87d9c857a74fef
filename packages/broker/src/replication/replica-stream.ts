import type { Partition } from '@booblik/log';
import {
  type Clock,
  decodeReplicateResponse,
  ErrorCode,
  encodeReplicateRequest,
  errorName,
  ReplicateFlag,
  type ReplicateRequest,
  readResponseFrame,
  systemClock,
  type TimerHandle,
  unrefTimer,
} from '@booblik/protocol';
import type { PeerConnection } from '../cluster/peer-connection.js';
import { STEP_MOVES, STREAM_MOVES, type StreamState, type StreamStep } from './replica-stream-states.js';
import { checkedMove } from './replication-rules.js';
import { wholeRecords } from './stored-records.js';

/** Requests of one stream in flight at once: enough to keep a loopback link busy while copying. */
const INFLIGHT_MAX = 8;
/** Bytes of one copy request (a replica that is behind is sent its records in pieces this large). */
const COPY_BYTES = 4 * 1024 * 1024;
/** Write groups held while a copy or probe is on its way, to follow it (beyond this, copying goes on). */
const HELD_BYTES_MAX = 16 * 1024 * 1024;
/** A replica that does not answer within this is treated as gone; the connection is dialled again. */
const ANSWER_TIMEOUT_MS = 10_000;
/** After a failed connection or a refusal, wait this long before the next try (doubling up to the max). */
const RETRY_MS_MIN = 50;
const RETRY_MS_MAX = 1000;

export interface StreamHost {
  readonly partition: Partition;
  readonly topic: string;
  readonly id: number;
  readonly epoch: number;
  /** What every in-sync replica holds: sent with each request. */
  readonly committed: number;
  /** The end of the last FORCED group written: a copy below it asks the replica for an fdatasync. */
  readonly forcedEnd: number;
  /** The replica confirmed it holds everything below `ackedEnd`. */
  acked(stream: ReplicaStream): void;
  /** The replica knows a later epoch than the host's: a later primary exists. */
  replacedBy(epoch: number): void;
  connect(address: string): PeerConnection;
  log(line: string): void;
}

/**
 * The primary's stream to one replica of one partition. It first learns where the replica's log
 * stands (a heartbeat at the primary's end: agreed, or the replica's end and last epoch back), cuts
 * a divergent tail there (the KIP-101 rule: the end of the replica's last epoch on the primary), then
 * copies what is missing from the log and, once level, sends each new write group as it is written.
 *
 *   unknown --probe agreed--> level (live groups)
 *   unknown --mismatch--> truncating? --> copying --caught up--> level
 *   any --connection lost / refusal--> unknown (after a pause)
 *
 * Probing, truncating and reading the log to copy are its declared steps (replica-stream-states.ts).
 */
export class ReplicaStream {
  /** The replica's log end, as far as sent: the next offset to send; null until learnt. */
  private next: number | null = null;
  private inflight = 0;
  private held: { baseOffset: number; stored: Buffer; count: number; forced: boolean }[] = [];
  private heldBytes = 0;
  private currentStep: StreamStep = 'idle';
  private retryMs = RETRY_MS_MIN;
  private retryTimer: TimerHandle | undefined;
  private current: StreamState = 'live';
  private connection: PeerConnection | null = null;
  /** The replica holds everything below this (in this epoch's stream); -1 until it said so. */
  ackedEnd = -1;
  /**
   * The clock's time when a request the replica has answered was sent while it held everything
   * written (Kafka's last caught-up time): how long it has been behind is measured from here, so a
   * replica that keeps up under constant load, never level at any one instant, is not behind.
   */
  caughtUpAt: number;
  /** Whether the replica answers now (a request of this stream was answered since the last failure). */
  inContact = false;
  lastCommitSent = -1;
  /** A heartbeat was due while requests were on their way. */
  private heartbeatOwed = false;
  /** The replica answered a later epoch: this primary has been replaced. */
  staleEpoch = false;
  /** Records sent as copies (not live groups), for the catch-up metrics. */
  copiedRecords = 0;
  /** Waiting for an answer to a request sent at or after `since` (the clock's time). */
  private readonly pings = new Set<{ since: number; settle: (answered: boolean) => void }>();

  constructor(
    readonly member: string,
    private address: string | undefined,
    private readonly host: StreamHost,
    private readonly clock: Clock = systemClock,
  ) {
    this.caughtUpAt = clock.now();
    this.pump();
  }

  /** The replica's address changed (it restarted elsewhere) or it came back. */
  setAddress(address: string | undefined): void {
    if (address === this.address) return;
    this.address = address;
    this.reset();
  }

  get state(): StreamState {
    return this.current;
  }

  /** The probe, cut or copy read on its way, if any. */
  get step(): StreamStep {
    return this.currentStep;
  }

  private get stopped(): boolean {
    return this.current === 'stopped';
  }

  /** The one place the state changes; a move its states do not allow is a bug. */
  private transition(to: StreamState): void {
    this.current = checkedMove(`stream to ${this.member}`, STREAM_MOVES, this.current, to);
  }

  private moveStep(to: StreamStep): void {
    this.currentStep = checkedMove(`stream to ${this.member}`, STEP_MOVES, this.currentStep, to);
  }

  /** Ends `step` if it is the one on its way (an answer overtaken by a reset finds another). */
  private endStep(step: StreamStep): void {
    if (this.currentStep === step) this.moveStep('idle');
  }

  /** Whether everything written so far has been confirmed. */
  get level(): boolean {
    return this.ackedEnd === this.host.partition.logEndOffset;
  }

  /** For the log line that drops it from the in-sync set. */
  describe(now = this.clock.now()): string {
    const end = this.host.partition.logEndOffset;
    return `${this.member} holds ${Math.max(0, this.ackedEnd)} of ${end}, caught up ${(now - this.caughtUpAt).toFixed(0)} ms ago${this.inContact ? '' : ', not answering'}`;
  }

  /** How long the replica has been behind: 0 while level, else since it last caught up. */
  behindMs(now = this.clock.now()): number {
    return this.level ? 0 : now - this.caughtUpAt;
  }

  /** A group just written on the primary: sent now if the replica is level with it. */
  groupWritten(baseOffset: number, stored: Buffer, count: number, forced: boolean): void {
    if (this.currentStep !== 'idle') {
      // A copy or a probe is on its way: the group is held and follows it if it joins on, so a
      // replica catching up under load ends up level instead of copying behind the writes forever.
      if (this.heldBytes + stored.length <= HELD_BYTES_MAX) {
        this.held.push({ baseOffset, stored, count, forced });
        this.heldBytes += stored.length;
      } else this.dropHeld();
      return;
    }
    if (this.next !== baseOffset) {
      this.pump();
      return;
    }
    this.sendLive(baseOffset, stored, count, forced);
  }

  private sendLive(baseOffset: number, stored: Buffer, count: number, forced: boolean): void {
    this.send(
      this.request(baseOffset, stored, count, this.host.epoch, forced ? ReplicateFlag.FORCED : 0),
      baseOffset + count,
    );
  }

  /** Sends the held groups that join on where the replica's end now stands; drops the rest. */
  private sendHeld(): void {
    const held = this.held;
    this.dropHeld();
    for (const g of held) {
      if (this.next === null || g.baseOffset + g.count <= this.next) continue; // the copy had it
      if (g.baseOffset !== this.next) return; // a gap, or a group cut by the copy: copying goes on
      this.sendLive(g.baseOffset, g.stored, g.count, g.forced);
    }
  }

  private dropHeld(): void {
    this.held = [];
    this.heldBytes = 0;
  }

  /** The commit offset moved and nothing is on its way to carry it: a heartbeat. */
  heartbeat(): void {
    if (this.next === null) return;
    if (this.lastCommitSent >= this.host.committed) {
      this.heartbeatOwed = false;
      return;
    }
    // What is on its way left before the commit moved: the heartbeat follows its answer.
    if (this.inflight > 0) {
      this.heartbeatOwed = true;
      return;
    }
    this.heartbeatOwed = false;
    this.send(this.request(this.next, EMPTY, 0, this.host.epoch, 0), this.next);
  }

  /**
   * Nothing on its way (an idle partition): an empty request at the replica's end, so a replica that
   * is level stays known to be level and answering, and one that died is noticed without a write.
   */
  keepAlive(): void {
    if (this.stopped || this.next === null || this.inflight > 0 || this.currentStep !== 'idle') return;
    this.heartbeatOwed = false;
    this.send(this.request(this.next, EMPTY, 0, this.host.epoch, 0), this.next);
  }

  /**
   * Whether the replica is alive and level now, asked, not remembered (a broker killed a moment ago
   * still has its member key for up to a lease): an empty request at its end, answered within
   * `timeoutMs`. False at once when this stream is not level with it or lost it.
   */
  ping(timeoutMs: number): Promise<boolean> {
    const next = this.next;
    const learning = this.currentStep === 'probing' || this.currentStep === 'truncating';
    if (this.stopped || next === null || learning || this.address === undefined) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => ping.settle(false), timeoutMs);
      const ping = {
        since: this.clock.now(),
        settle: (answered: boolean) => {
          this.clock.clearTimeout(timer);
          this.pings.delete(ping);
          resolve(answered);
        },
      };
      this.pings.add(ping);
      this.send(this.request(next, EMPTY, 0, this.host.epoch, 0), next);
    });
  }

  stop(): void {
    if (this.stopped) return;
    this.transition('stopped');
    this.clock.clearTimeout(this.retryTimer);
    for (const ping of [...this.pings]) ping.settle(false);
  }

  private request(
    base: number,
    stored: Buffer,
    count: number,
    recordsEpoch: number,
    flags: number,
  ): ReplicateRequest {
    const p = this.host.partition;
    return {
      topic: this.host.topic,
      partition: this.host.id,
      epoch: this.host.epoch,
      recordsEpoch,
      baseOffset: base,
      prevEpoch: base === 0 ? 0 : p.epochs.epochAt(base - 1),
      commitOffset: this.host.committed,
      flags,
      count,
      stored,
    };
  }

  /** Sends one request; `next` is where the replica's end stands once it is taken. */
  private send(
    req: ReplicateRequest,
    next: number,
    onAnswer?: (code: number, end: number, lastEpoch: number) => void,
  ): void {
    const connection = this.link();
    if (connection === null) return;
    this.inflight++;
    this.next = next;
    this.lastCommitSent = req.commitOffset;
    const sentAt = this.clock.now();
    // Once it has taken this request, it holds everything written so far if `next` is our end.
    const levelOnAnswer = next >= this.host.partition.logEndOffset;
    connection.send(encodeReplicateRequest(0, req), ANSWER_TIMEOUT_MS, (frame, failure) => {
      this.inflight--;
      if (this.stopped) return;
      if (frame === null) {
        this.fail(`no answer: ${failure ?? 'connection lost'}`);
        return;
      }
      let answer: ReturnType<typeof decodeReplicateResponse>;
      try {
        const response = readResponseFrame(frame);
        answer = decodeReplicateResponse(response.errorCode, response.body);
      } catch (error) {
        this.fail(`an answer that does not decode: ${(error as Error).message}`);
        return;
      }
      if (answer.code === ErrorCode.NONE) {
        this.inContact = true;
        if (levelOnAnswer && sentAt > this.caughtUpAt) this.caughtUpAt = sentAt;
        for (const ping of [...this.pings]) if (ping.since <= sentAt) ping.settle(true);
      }
      if (onAnswer !== undefined) {
        onAnswer(answer.code, answer.logEndOffset, answer.lastEpoch);
        return;
      }
      if (answer.code === ErrorCode.NONE) {
        this.confirm(answer.logEndOffset);
        return;
      }
      if (answer.code === ErrorCode.STALE_EPOCH) {
        this.staleEpoch = true;
        this.fail(`it knows epoch ${answer.knownEpoch}, later than ours (${this.host.epoch})`);
        this.host.replacedBy(answer.knownEpoch);
        return;
      }
      if (answer.code === ErrorCode.OFFSET_MISMATCH) {
        // Our picture of its log was wrong (a request lost on the way): learn it again.
        this.reset();
        return;
      }
      this.fail(`refused with ${errorName(answer.code)}`);
    });
  }

  private confirm(end: number): void {
    this.retryMs = RETRY_MS_MIN;
    if (end > this.ackedEnd) this.ackedEnd = end;
    if (this.currentStep === 'idle' && this.held.length > 0) this.sendHeld();
    // The commit moved while this request was on its way (the others answered first): without this
    // an idle partition would leave this replica's high watermark behind until the next write. Before
    // this answer counts: a commit it moves itself is told by the pipeline's heartbeat, batched.
    if (this.heartbeatOwed && this.inflight === 0) this.heartbeat();
    this.host.acked(this);
    this.pump();
  }

  /** Learns the replica's end, copies what it lacks; does nothing while a step is on its way. */
  private pump(): void {
    if (this.stopped || this.address === undefined || this.currentStep !== 'idle') return;
    if (this.current === 'paused') return;
    const p = this.host.partition;
    if (this.next === null) {
      this.probe(p.logEndOffset);
      return;
    }
    if (this.next < p.logEndOffset && this.inflight < INFLIGHT_MAX) void this.copy(this.next);
  }

  private probe(at: number): void {
    this.moveStep('probing');
    this.send(this.request(at, EMPTY, 0, this.host.epoch, 0), at, (code, end, lastEpoch) => {
      this.endStep('probing');
      if (code === ErrorCode.NONE) {
        this.confirm(end);
        return;
      }
      if (code === ErrorCode.OFFSET_MISMATCH) {
        this.diverged(end, lastEpoch);
        return;
      }
      this.fail(`probe refused with ${errorName(code)}`);
      if (code === ErrorCode.STALE_EPOCH) {
        this.staleEpoch = true;
        this.host.replacedBy(this.host.epoch + 1);
      }
    });
    if (this.inflight === 0) this.endStep('probing'); // no connection: retried later
  }

  /**
   * The replica's log ends at `end` with records of `lastEpoch`. Everything up to where our log ends
   * that epoch is the same in both (one primary per epoch, and each group checked against the
   * record before it); past it, its records were never committed: cut them.
   */
  private diverged(end: number, lastEpoch: number): void {
    const p = this.host.partition;
    const agreed = p.epochs.endOf(lastEpoch, p.logEndOffset);
    const cut = Math.min(end, agreed.endOffset);
    if (cut >= end) {
      this.next = end;
      this.confirm(end);
      return;
    }
    // An answer overtaken by a reset, another step on its way since: that step learns afresh.
    if (this.currentStep !== 'idle') return;
    this.moveStep('truncating');
    this.log(
      `${this.host.topic}-${this.host.id}: ${this.member} diverged after ${cut} (its end ${end}, epoch ${lastEpoch}); cutting it back`,
    );
    this.send(
      this.request(cut, EMPTY, 0, this.host.epoch, ReplicateFlag.TRUNCATE),
      cut,
      (code, newEnd, newLastEpoch) => {
        this.endStep('truncating');
        if (code !== ErrorCode.NONE) {
          this.fail(`truncation to ${cut} refused with ${errorName(code)}`);
          return;
        }
        // Agreed up to `newEnd` only if its epoch there is ours too: otherwise look again, one epoch lower.
        const ours = newEnd === 0 ? 0 : p.epochs.epochAt(newEnd - 1);
        if (ours !== newLastEpoch) {
          this.diverged(newEnd, newLastEpoch);
          return;
        }
        this.next = newEnd;
        // Level with us already when the cut left it at our end: it may rejoin the in-sync set now.
        this.ackedEnd = newEnd;
        this.confirm(newEnd);
      },
    );
    if (this.inflight === 0) this.endStep('truncating');
  }

  /** Copies records from `from` (a replica that is behind): one epoch's records per request. */
  private async copy(from: number): Promise<void> {
    const p = this.host.partition;
    this.moveStep('reading');
    let bytes: Buffer;
    try {
      bytes = await p.readWritten(from, COPY_BYTES);
    } catch (error) {
      this.moveStep('idle');
      this.fail(`reading ${from} to copy: ${(error as Error).message}`);
      return;
    }
    this.moveStep('idle'); // nothing else starts while a read is on its way
    if (this.stopped || this.next !== from) return;
    const recordsEpoch = p.epochs.epochAt(from);
    const epochEnd = nextEpochStart(p, recordsEpoch, p.logEndOffset);
    const { count, length } = wholeRecords(bytes, epochEnd - from);
    if (count === 0) {
      this.fail(`nothing readable at ${from}`);
      return;
    }
    const stored = bytes.subarray(0, length);
    const flags = from < this.host.forcedEnd ? ReplicateFlag.FORCED : 0;
    this.copiedRecords += count;
    this.send(this.request(from, stored, count, recordsEpoch, flags), from + count);
    this.sendHeld();
    this.pump();
  }

  private link(): PeerConnection | null {
    if (this.address === undefined) return null;
    if (this.connection === null || this.connection.isDead) this.connection = this.host.connect(this.address);
    return this.connection;
  }

  private fail(why: string): void {
    if (this.stopped) return;
    this.inContact = false;
    for (const ping of [...this.pings]) ping.settle(false);
    this.log(`${this.host.topic}-${this.host.id}: replica ${this.member}: ${why}`);
    this.reset();
    this.transition('paused');
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      if (this.current === 'paused') this.transition('live');
      this.pump();
    }, this.retryMs);
    unrefTimer(this.retryTimer);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MS_MAX);
  }

  /** Forgets where the replica stands: the next step asks it again. */
  private reset(): void {
    this.next = null;
    this.endStep('probing');
    this.endStep('truncating');
    this.dropHeld();
    this.pump();
  }

  private log(line: string): void {
    this.host.log(line);
  }
}

const EMPTY = Buffer.alloc(0);

/** Where the epoch after `epoch` starts in the partition's history, or `end` when it is the latest. */
function nextEpochStart(p: Partition, epoch: number, end: number): number {
  for (const entry of p.epochs.entries) if (entry.epoch > epoch) return entry.startOffset;
  return end;
}
