/** What a verb's flags are and what parsing them gives: the types args.ts and the flag groups share. */

/** A verb's flags: each takes a value (`string`) or stands alone (`boolean`). */
export type Flags = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** Parsed arguments, read by name: `string('partition')`, `flag('follow')`. */
export class Args {
  constructor(
    private readonly values: Record<string, unknown>,
    readonly positionals: string[],
  ) {}

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  /** Every value of a flag given more than once (`multiple`), in order. */
  strings(name: string): string[] {
    const value = this.values[name];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  }
}
