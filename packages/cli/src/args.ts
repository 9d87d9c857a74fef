/** Command-line parsing on node:util parseArgs; every mistake becomes a UsageError naming the argument. */
import { parseArgs } from 'node:util';
import { AckPolicy, type AckPolicyValue, InvalidArgumentError, parseAddress } from '@booblik/client';
import { topicNameProblem } from '@booblik/protocol';
import { BROKER_ENV, DEFAULT_BROKER } from './constants.js';
import { authFlags } from './credentials.js';
import { UsageError } from './errors.js';
import { Args, type Flags } from './parsed-args.js';
import { tlsFlags } from './tls.js';

export { Args, type Flags };

/** Flags every verb takes. */
export const globalFlags: Flags = {
  broker: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...authFlags,
  ...tlsFlags,
};

/**
 * Parses a verb's arguments (the verb itself removed) with its own flags plus the global ones. Each
 * argument is read here first, so that every mistake gets a message of ours naming the argument (Node's
 * parser would say "argument is ambiguous" for `--from -1`). A flag that takes a value takes the next
 * argument whatever it looks like: `--from -1` is a bad offset, and `--key -x` is the key "-x".
 */
export function parse(args: string[], flags: Flags): Args {
  const options = { ...globalFlags, ...flags };
  try {
    const { values, positionals } = parseArgs({
      args: normalize(args, options),
      options,
      allowPositionals: true,
      strict: true,
    });
    return new Args(values, positionals);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** Rewrites `--name value` as `--name=value` after checking that every flag exists and gets its value. */
function normalize(args: string[], options: Flags): string[] {
  const byShort = new Map(Object.entries(options).flatMap(([name, f]) => (f.short ? [[f.short, name]] : [])));
  const known = () =>
    Object.entries(options)
      .map(([name, f]) => `--${name}${f.type === 'string' ? ' <value>' : ''}`)
      .join(', ');
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.push(arg);
      continue;
    }
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const given = equals >= 0 ? arg.slice(0, equals) : arg;
    const name = given.startsWith('--') ? given.slice(2) : byShort.get(given.slice(1));
    const flag = name === undefined ? undefined : options[name];
    if (name === undefined || flag === undefined) {
      throw new UsageError(`unknown option ${given} (this command takes ${known()})`);
    }
    if (flag.type === 'boolean') {
      if (equals >= 0) throw new UsageError(`--${name} takes no value, got "${arg.slice(equals + 1)}"`);
      out.push(`--${name}`);
      continue;
    }
    let value: string;
    if (equals >= 0) value = arg.slice(equals + 1);
    else if (i + 1 < args.length) value = args[++i]!;
    else throw new UsageError(`--${name} needs a value`);
    out.push(`--${name}=${value}`);
  }
  return out;
}

/** The verb: the first argument that is not a flag or the value of a global one (--broker, --user, --tls.ca). */
export function splitVerb(argv: string[]): { verb: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--') && globalFlags[arg.slice(2)]?.type === 'string') {
      i++;
      continue;
    }
    if (arg === '--') break;
    if (!arg.startsWith('-')) return { verb: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { verb: undefined, rest: argv };
}

/**
 * --broker, else BOOBLIK_BROKER, else 127.0.0.1:9092: one `host:port` or several, comma-separated
 * (bootstrap brokers, tried in turn). Checked here so that a typo is a usage error naming the entry.
 */
export function brokerAddresses(flag: string | undefined, env: Record<string, string | undefined>): string[] {
  const given = flag ?? (env[BROKER_ENV] || undefined) ?? DEFAULT_BROKER;
  const source = flag !== undefined ? '--broker' : env[BROKER_ENV] ? BROKER_ENV : 'default broker';
  const addresses = given.split(',').map((a) => a.trim());
  for (const [i, address] of addresses.entries()) {
    const where = addresses.length > 1 ? ` (address ${i + 1} of ${addresses.length})` : '';
    if (address === '') throw new UsageError(`${source}: "${given}"${where} is empty, expected host:port`);
    try {
      parseAddress(address);
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new UsageError(`${source}${where}: ${error.message}`);
      throw error;
    }
  }
  return addresses;
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

/** Where `consume --from` starts: an end of the partition, an offset, or the last `last` records. */
export type StartOffset = 'earliest' | 'latest' | number | { last: number };

/** --from: earliest, latest, an offset (an integer >= 0), or -N (the last N records of each partition). */
export function startOffset(name: string, text: string): StartOffset {
  if (text === 'earliest' || text === 'latest') return text;
  const last = /^-\d+$/.test(text) ? -Number(text) : Number.NaN;
  if (Number.isSafeInteger(last) && last >= 1) return { last };
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new UsageError(
      `${name}: "${text}", expected earliest|latest|<offset>|-<count> (an offset is an integer >= 0; ` +
        '-10 is the last 10 records of each partition)',
    );
  }
  return value;
}

/** Exactly `count` positional arguments, named for the message. */
export function positionals(given: string[], names: string[]): string[] {
  if (given.length !== names.length) {
    const expected = names.map((n) => `<${n}>`).join(' ');
    throw new UsageError(`expected ${expected || 'no arguments'}, got ${given.length} argument(s)`);
  }
  return given;
}

/**
 * A topic named on the command line, checked here: the broker would refuse a bad name with a bare
 * CORRUPT_REQUEST, where the protocol's rule can say which character is wrong.
 */
export function topicName(text: string): string {
  const problem = topicNameProblem(text);
  if (problem !== null) throw new UsageError(`topic ${JSON.stringify(text)} ${problem}`);
  return text;
}
