/**
 * The token keys file (`booblik.auth.token.keys.file`): one key per line, `ID SECRET`, the secret in
 * base64url (at least 32 bytes: HS256's key). The first key signs new tokens; every key listed
 * verifies, so a key is rotated by adding the new one first, then removing the old once its tokens
 * have expired. `#` starts a comment. Errors name the line, never the secret.
 */

export interface TokenKey {
  /** The JWT header's `kid`. */
  id: string;
  secret: Buffer;
}

export const tokenKeyBytesMin = 32;

export class TokenKeysError extends Error {
  override name = 'TokenKeysError';
}

export function parseTokenKeys(text: string, source: string): TokenKey[] {
  const keys: TokenKey[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*/, '').trim();
    if (line === '') continue;
    const where = `${source}:${i + 1}`;
    const parts = line.split(/\s+/);
    if (parts.length !== 2)
      throw new TokenKeysError(`${where}: expected "ID SECRET" (the secret in base64url)`);
    const [id, encoded] = parts as [string, string];
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id))
      throw new TokenKeysError(
        `${where}: key id ${JSON.stringify(id)}: letters, digits, ".", "_", "-", at most 64`,
      );
    if (!/^[A-Za-z0-9_-]+={0,2}$/.test(encoded))
      throw new TokenKeysError(`${where}: key ${id}: the secret is not base64url`);
    const secret = Buffer.from(encoded, 'base64url');
    if (secret.length < tokenKeyBytesMin)
      throw new TokenKeysError(
        `${where}: key ${id}: the secret is ${secret.length} bytes, at least ${tokenKeyBytesMin}`,
      );
    if (keys.some((k) => k.id === id)) throw new TokenKeysError(`${where}: key id ${id} is listed twice`);
    keys.push({ id, secret });
  }
  if (keys.length === 0) throw new TokenKeysError(`${source}: no key (lines "ID SECRET")`);
  return keys;
}
