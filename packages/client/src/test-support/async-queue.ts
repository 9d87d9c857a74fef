/** An unbounded queue whose shift() waits for the next item: tests wait on events, never on time. */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private readonly takers: ((item: T) => void)[] = [];

  push(item: T): void {
    const taker = this.takers.shift();
    if (taker) taker(item);
    else this.items.push(item);
  }

  shift(): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  get length(): number {
    return this.items.length;
  }
}
