/** Command-line parsing on node:util parseArgs; every mistake becomes a UsageError naming the argument. */
import { parseArgs } from 'node:util';
import { AckPolicy, type AckPolicyValue, InvalidArgumentError, parseAddress } from '@booblik/client';
import { BROKER_ENV, DEFAULT_BROKER } from './constants.js';
import { UsageError } from './errors.js';

/** A verb's flags: each takes a value (`string`) or stands alone (`boolean`). */
export type Flags = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** Flags every verb takes. */
export const globalFlags: Flags = {
  broker: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

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
}

/** Parses a verb's arguments (the verb itself removed) with its own flags plus the global ones. */
export function parse(args: string[], flags: Flags): Args {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...globalFlags, ...flags },
      allowPositionals: true,
      strict: true,
    });
    return new Args(values, positionals);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The verb: the first argument that is not a flag or the value of --broker. */
export function splitVerb(argv: string[]): { verb: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--broker') {
      i++;
      continue;
    }
    if (arg === '--') break;
    if (!arg.startsWith('-')) return { verb: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { verb: undefined, rest: argv };
}

/** --broker, else BOOBLIK_BROKER, else 127.0.0.1:9092; checked here so a typo is a usage error. */
export function brokerAddress(flag: string | undefined, env: Record<string, string | undefined>): string {
  const address = flag ?? (env[BROKER_ENV] || undefined) ?? DEFAULT_BROKER;
  try {
    parseAddress(address);
  } catch (error) {
    if (error instanceof InvalidArgumentError) {
      const source = flag !== undefined ? '--broker' : env[BROKER_ENV] ? BROKER_ENV : 'default broker';
      throw new UsageError(`${source}: ${error.message}`);
    }
    throw error;
  }
  return address;
}

/** An integer argument with a lower bound; the message names the flag and what was given. */
export function integer(name: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${name}: "${text}", expected an integer ${min}..${max}`);
  }
  return value;
}

const ackNames: Record<string, AckPolicyValue> = {
  none: AckPolicy.NONE,
  written: AckPolicy.WRITTEN,
  forced: AckPolicy.FORCED,
};

export function ackPolicy(name: string, text: string): AckPolicyValue {
  const ack = ackNames[text];
  if (ack === undefined) throw new UsageError(`${name}: "${text}", expected none, written or forced`);
  return ack;
}

export function oneOf<T extends string>(name: string, text: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(text)) {
    throw new UsageError(`${name}: "${text}", expected ${choices.join(', ')}`);
  }
  return text as T;
}

/** Exactly `count` positional arguments, named for the message. */
export function positionals(given: string[], names: string[]): string[] {
  if (given.length !== names.length) {
    const expected = names.map((n) => `<${n}>`).join(' ');
    throw new UsageError(`expected ${expected || 'no arguments'}, got ${given.length} argument(s)`);
  }
  return given;
}
