/**
 * The first offset not yet readable, as a value a waiter cannot miss: a subscriber names the value
 * it last saw, and is called at once if the watermark has already moved past it (a write that lands
 * between a reader's check and its subscription still wakes it).
 */
export class HighWatermark {
  private listeners = new Set<(value: number) => void>();

  constructor(private current: number) {}

  get value(): number {
    return this.current;
  }

  /** Moves the watermark forward (never back) and tells every subscriber. */
  advance(value: number): void {
    if (value <= this.current) return;
    this.current = value;
    if (this.listeners.size === 0) return; // the common case: nobody waiting, nothing to copy
    for (const listener of [...this.listeners]) listener(value);
  }

  /**
   * Calls `listener` on every advance until unsubscribed. If the value is already past `seen`, the
   * listener is called before this returns. Returns the unsubscribe function.
   */
  subscribe(seen: number, listener: (value: number) => void): () => void {
    this.listeners.add(listener);
    const unsubscribe = () => {
      this.listeners.delete(listener);
    };
    if (this.current > seen) listener(this.current);
    return unsubscribe;
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}
