import fs from 'node:fs';
import { ConfigError } from '../errors.js';
import { type BrokerConfig, configKeys, envNameOf } from './keys.js';
import { parseProperties } from './properties.js';

export interface ConfigSources {
  /** Command-line arguments after the program name: `[file.properties] [--key=value | --key value]...`. */
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
}

export interface LoadedConfig {
  config: BrokerConfig;
  /** Where each key's value came from: default, a file (with line), env, or flag. */
  origins: Record<string, string>;
  /** Things worth a warning line that do not stop startup. */
  warnings: string[];
}

/**
 * Variables that are not settings: clients and tools read some; the broker reads
 * BOOBLIK_BOOTSTRAP_USER itself at start (security), so it is no reason for a warning either.
 */
const nonBrokerEnv = new Set(['BOOBLIK_BROKER', 'BOOBLIK_CRC32C', 'BOOBLIK_BOOTSTRAP_USER']);

const byKey = new Map<string, (typeof configKeys)[number]>(configKeys.map((k) => [k.key, k]));

function lookupKey(name: string, where: string) {
  const key = name.startsWith('booblik.') ? name : `booblik.${name}`;
  const spec = byKey.get(key);
  if (!spec) {
    throw new ConfigError(`${where}: unknown key "${name}"; known keys: ${[...byKey.keys()].join(', ')}`);
  }
  return spec;
}

/**
 * Merges the sources, later ones winning: defaults, the properties file named by the first argument,
 * BOOBLIK_* environment variables, then --flags. An unknown key (in a file or a flag) or a bad value
 * anywhere throws ConfigError naming the key and what it allows.
 */
export function loadConfig(sources: ConfigSources): LoadedConfig {
  const raw = new Map<string, { value: string; origin: string }>();
  for (const spec of configKeys) raw.set(spec.key, { value: spec.default, origin: 'default' });
  const warnings: string[] = [];

  const args = [...sources.argv];
  if (args.length > 0 && !args[0]!.startsWith('-')) {
    const file = args.shift()!;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`configuration file ${file}: ${(error as Error).message}`);
    }
    for (const p of parseProperties(text)) {
      const spec = lookupKey(p.key, `${file}:${p.line}`);
      raw.set(spec.key, { value: p.value, origin: `${file}:${p.line}` });
    }
  }

  for (const [name, value] of Object.entries(sources.env)) {
    if (!name.startsWith('BOOBLIK_') || value === undefined) continue;
    const spec = configKeys.find((k) => envNameOf(k.key) === name);
    if (spec) raw.set(spec.key, { value, origin: `env ${name}` });
    else if (!nonBrokerEnv.has(name))
      warnings.push(`environment variable ${name} is not a broker setting; ignored`);
  }

  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (!match)
      throw new ConfigError(`argument "${arg}": expected --key=value (run with --help for the keys)`);
    let value = match[2];
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new ConfigError(`flag --${match[1]}: needs a value`);
    }
    const spec = lookupKey(match[1]!, `flag --${match[1]}`);
    raw.set(spec.key, { value, origin: `flag --${match[1]}` });
  }

  const config = {} as Record<string, unknown>;
  const origins: Record<string, string> = {};
  for (const spec of configKeys) {
    const { value, origin } = raw.get(spec.key)!;
    const parsed = spec.parse(value);
    if (parsed === undefined) {
      throw new ConfigError(
        `${spec.key}: ${JSON.stringify(value)} (from ${origin}) is not allowed; expected ${spec.allowed}`,
      );
    }
    config[spec.field] = parsed;
    origins[spec.key] = origin;
  }
  return { config: config as unknown as BrokerConfig, origins, warnings };
}

/** The `--help` text: every key with its default and what it allows. */
export function configHelp(): string {
  const lines = [
    'usage: booblik-broker [config.properties] [--key=value ...]',
    '',
    'Sources, later winning: defaults, the properties file, BOOBLIK_* environment variables, flags.',
    'A flag may drop the "booblik." prefix: --port=9092 is --booblik.port=9092.',
    '',
  ];
  for (const k of configKeys) {
    lines.push(`  ${k.key}  (${envNameOf(k.key)}, default ${k.default})`);
    lines.push(`      ${k.description}; ${k.allowed}`);
  }
  return lines.join('\n');
}
