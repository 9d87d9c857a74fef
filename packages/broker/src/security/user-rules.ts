/** What a user's name and credential must be, checked on USERS and when the users file is read. */
import {
  type ScramCredential,
  scramIterationsMin,
  scramKeyBytes,
  scramSaltBytesMin,
  userNameBytesMax,
} from '@booblik/protocol';

/** Printable, no control characters or spaces at either end: a name shows in logs and lists. */
export function userNameProblem(name: string): string | null {
  const bytes = Buffer.byteLength(name);
  if (bytes === 0 || bytes > userNameBytesMax) return `name: ${bytes} bytes, expected 1..${userNameBytesMax}`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\x00-\x1f\x7f]/.test(name) || name.trim() !== name)
    return 'name: no control characters, no spaces at either end';
  return null;
}

export function credentialProblem(name: string, c: ScramCredential): string | null {
  const nameProblem = userNameProblem(name);
  if (nameProblem !== null) return nameProblem;
  if (!Number.isSafeInteger(c.iterations) || c.iterations < scramIterationsMin || c.iterations > 10_000_000)
    return `iterations: ${c.iterations}, expected ${scramIterationsMin}..10000000`;
  if (c.salt.length < scramSaltBytesMin)
    return `salt: ${c.salt.length} bytes, expected at least ${scramSaltBytesMin}`;
  if (c.storedKey.length !== scramKeyBytes || c.serverKey.length !== scramKeyBytes)
    return `storedKey and serverKey: ${scramKeyBytes} bytes each`;
  return null;
}
