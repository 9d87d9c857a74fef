/**
 * A named set of states and the moves allowed between them. A move outside the table is a bug of
 * ours (never the peer's), so it throws at once instead of leaving an object half in two phases.
 */
export class StateMachine<S extends string> {
  private current: S;

  constructor(
    private readonly what: string,
    initial: S,
    private readonly transitions: Readonly<Record<S, readonly S[]>>,
  ) {
    this.current = initial;
  }

  get state(): S {
    return this.current;
  }

  is(...states: S[]): boolean {
    return states.includes(this.current);
  }

  to(next: S): void {
    if (!this.transitions[this.current].includes(next)) {
      throw new Error(`${this.what}: ${this.current} -> ${next} is not a transition`);
    }
    this.current = next;
  }
}
