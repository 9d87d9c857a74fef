/**
 * Who the command connects as: `--user NAME` (the password from `--password-file FILE` or
 * BOOBLIK_PASSWORD) or `--token-file FILE`, else BOOBLIK_USER / BOOBLIK_TOKEN; flags win over the
 * environment. Secrets come only from files and the environment, never from argv, and no message
 * here carries one.
 */
import fs from 'node:fs';
import type { AuthOptions } from '@booblik/client';
import { UsageError } from './errors.js';
import type { Args, Flags } from './parsed-args.js';

export const USER_ENV = 'BOOBLIK_USER';
export const PASSWORD_ENV = 'BOOBLIK_PASSWORD';
export const TOKEN_ENV = 'BOOBLIK_TOKEN';

/** The flags of every command that connects. */
export const authFlags: Flags = {
  user: { type: 'string' },
  'password-file': { type: 'string' },
  'token-file': { type: 'string' },
};

/** `{ auth }` for the connect options, or `{}` when no credentials are given. */
export function authOption(parsed: Args, env: Record<string, string | undefined>): { auth?: AuthOptions } {
  const userFlag = parsed.string('user');
  const passwordFile = parsed.string('password-file');
  const tokenFile = parsed.string('token-file');
  if (userFlag !== undefined && tokenFile !== undefined)
    throw new UsageError('--user and --token-file both say who connects: give one of them');
  if (tokenFile !== undefined) {
    if (passwordFile !== undefined)
      throw new UsageError('--password-file goes with --user, not --token-file');
    readSecret('--token-file', tokenFile, true); // now, so that a missing file is a usage error before connecting
    // Read again at each use: a token renewed in the file is picked up when the old one expires.
    return { auth: { token: () => readSecret('--token-file', tokenFile, true) } };
  }
  const user = userFlag ?? (env[USER_ENV] || undefined);
  if (user === undefined) {
    if (passwordFile !== undefined)
      throw new UsageError('--password-file needs --user NAME (or BOOBLIK_USER)');
    const token = env[TOKEN_ENV];
    return token ? { auth: { token: token.trim() } } : {};
  }
  const from = userFlag !== undefined ? '--user' : USER_ENV;
  if (user === '') throw new UsageError(`${from}: expected a user name`);
  const password =
    passwordFile !== undefined ? readSecret('--password-file', passwordFile, false) : env[PASSWORD_ENV];
  if (!password)
    throw new UsageError(
      `${from} ${user} needs a password: set ${PASSWORD_ENV}, or give --password-file FILE (it is never taken on the command line)`,
    );
  return { auth: { user, password } };
}

/**
 * A secret's file: its first line, without the line end (a token also without spaces around it; a
 * password keeps them). Errors name the file, never what it holds.
 */
function readSecret(flag: string, file: string, trim: boolean): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`${flag} ${file}: cannot read it (${code})`);
  }
  const line = text.split(/\r?\n/, 1)[0]!;
  const secret = trim ? line.trim() : line;
  if (secret === '') throw new UsageError(`${flag} ${file}: the file is empty`);
  return secret;
}
