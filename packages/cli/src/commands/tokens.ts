/**
 * booblik tokens issue: a token (an HS256 JWT) signed with the first key of a token keys file, the
 * same file the broker verifies with. Offline: nothing is sent. The token alone goes to stdout.
 */
import fs from 'node:fs';
import { parseTokenKeys, TokenKeysError } from '@booblik/protocol';
import { SignJWT } from 'jose';
import { parse, positionals } from '../args.js';
import { ExitCode } from '../constants.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';

const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A token lives at most this long: one that never ends in practice cannot be taken back. */
const TTL_SECONDS_MAX = 366 * 86_400;

/** Claims the command sets itself, from --subject and --ttl. */
const reserved = new Set(['sub', 'iat', 'exp', 'nbf']);

export async function tokensCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {
    subject: { type: 'string' },
    ttl: { type: 'string' },
    claim: { type: 'string', multiple: true },
    'keys-file': { type: 'string' },
  });
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('tokens'));
    return ExitCode.OK;
  }
  const [sub, ...rest] = parsed.positionals;
  if (sub !== 'issue')
    throw new UsageError(`tokens: expected issue, got ${sub === undefined ? 'nothing' : `"${sub}"`}`);
  positionals(rest, []);
  const subject = parsed.string('subject');
  if (!subject)
    throw new UsageError('tokens issue: --subject NAME is required (the principal the token names)');
  const ttlText = parsed.string('ttl');
  if (ttlText === undefined)
    throw new UsageError('tokens issue: --ttl is required (for example 15m, 1h, 7d)');
  const ttlSeconds = ttl(ttlText);
  const keysFile = parsed.string('keys-file');
  if (keysFile === undefined) throw new UsageError('tokens issue: --keys-file FILE is required');
  const claims = extraClaims(parsed.strings('claim'));
  let text: string;
  try {
    text = fs.readFileSync(keysFile, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--keys-file ${keysFile}: cannot read it (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  let key: { id: string; secret: Buffer };
  try {
    key = parseTokenKeys(text, keysFile)[0]!;
  } catch (error) {
    if (error instanceof TokenKeysError) throw new UsageError(error.message);
    throw error;
  }
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.id })
    .setSubject(subject)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key.secret);
  await out.write(`${token}\n`);
  return ExitCode.OK;
}

/** `90s`, `15m`, `1h`, `7d`: a whole number and a unit. */
function ttl(text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text);
  const seconds = match ? Number(match[1]) * unitSeconds[match[2]!]! : Number.NaN;
  if (!(seconds >= 1 && seconds <= TTL_SECONDS_MAX))
    throw new UsageError(
      `--ttl: "${text}", expected a duration 1s..366d (a number and s, m, h or d: 15m, 1h, 7d)`,
    );
  return seconds;
}

/** `--claim groups=a,b` is the array ["a","b"]; any other `--claim k=v` the string v. */
function extraClaims(given: readonly string[]): Record<string, string | string[]> {
  const claims: Record<string, string | string[]> = {};
  for (const claim of given) {
    const equals = claim.indexOf('=');
    const name = equals > 0 ? claim.slice(0, equals) : '';
    if (name === '') throw new UsageError(`--claim: "${claim}", expected NAME=VALUE (groups=a,b)`);
    if (reserved.has(name))
      throw new UsageError(`--claim ${name}: set by --subject and --ttl, not by --claim`);
    if (name in claims) throw new UsageError(`--claim ${name}: given twice`);
    const value = claim.slice(equals + 1);
    claims[name] = name === 'groups' ? value.split(',').filter((g) => g !== '') : value;
  }
  return claims;
}
