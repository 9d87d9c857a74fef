import { AckPolicy } from '@booblik/protocol';
import type { LogConfig } from '../config.js';
import type { Pending } from './types.js';

/**
 * The writer's bounded queue: admitted batches (the next group), and batches waiting for room in
 * arrival order (none may overtake another). A full queue makes callers wait: memory stays bounded.
 */
export class BatchQueue {
  private queued: Pending[] = [];
  private bytes = 0;
  private waiting: Pending[] = [];
  /** FORCED batches admitted. */
  forced = 0;

  constructor(private readonly log: { readonly config: Readonly<LogConfig> }) {}

  get length(): number {
    return this.queued.length;
  }

  /** Batches waiting for room. */
  get blocked(): number {
    return this.waiting.length;
  }

  get halfFull(): boolean {
    return this.bytes * 2 > this.log.config.writerQueueBytesMax;
  }

  /** Admits `pending`, or makes it wait when another already waits or it does not fit; true if admitted. */
  offer(pending: Pending): boolean {
    if (this.waiting.length > 0 || !this.fits(pending.storedBytes)) {
      this.waiting.push(pending);
      return false;
    }
    this.admit(pending);
    return true;
  }

  admit(pending: Pending): void {
    this.queued.push(pending);
    this.bytes += pending.storedBytes;
    if (pending.ack === AckPolicy.FORCED) this.forced++;
  }

  /** Takes every admitted batch, as the next group. */
  take(): Pending[] {
    const taken = this.queued;
    this.queued = [];
    this.bytes = 0;
    this.forced = 0;
    return taken;
  }

  /** The oldest waiting batch, taken out, if it fits now. */
  nextFitting(): Pending | undefined {
    const first = this.waiting[0];
    return first !== undefined && this.fits(first.storedBytes) ? this.waiting.shift() : undefined;
  }

  /** Empties both, returning the admitted batches, then the waiting ones. */
  drain(): Pending[] {
    const all = [...this.take(), ...this.waiting];
    this.waiting = [];
    return all;
  }

  private fits(bytes: number): boolean {
    // An empty queue takes any batch, however large, or that batch would wait forever.
    return this.bytes === 0 || this.bytes + bytes <= this.log.config.writerQueueBytesMax;
  }
}
