import { InvalidKeyError } from './errors.js';

/** S3's limit on a key, in UTF-8 bytes; the store's prefix counts against it too. */
export const KEY_BYTES_MAX = 1024;

/**
 * A key is a relative path: segments separated by '/', none empty, none starting with '.' (that
 * rules out '.' and '..', and keeps names starting with '.' free for the file store's temporary
 * files), no NUL. The same rule for every store, so a key that works on file:// works on S3.
 */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidKeyError(String(key), 'empty');
  if (key.endsWith('/')) throw new InvalidKeyError(key, "ends with '/'; a key names an object, not a folder");
  checkSegments(key, key.split('/'));
}

/** A listing prefix: empty, or a key's beginning (it may end with '/' or inside a segment). */
export function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw new InvalidKeyError(String(prefix), 'a prefix must be a string');
  if (prefix.length === 0) return;
  const segments = prefix.split('/');
  // The last segment may be empty (a prefix ending with '/') or a segment's beginning.
  const last = segments.pop()!;
  checkSegments(prefix, segments);
  if (last.startsWith('.'))
    throw new InvalidKeyError(prefix, `segment ${JSON.stringify(last)} starts with '.'`);
  if (last.includes('\0')) throw new InvalidKeyError(prefix, 'contains NUL');
}

function checkSegments(whole: string, segments: string[]): void {
  if (Buffer.byteLength(whole) > KEY_BYTES_MAX) {
    throw new InvalidKeyError(whole, `${Buffer.byteLength(whole)} bytes, expected at most ${KEY_BYTES_MAX}`);
  }
  for (const segment of segments) {
    if (segment.length === 0) throw new InvalidKeyError(whole, "an empty segment (a leading '/' or '//')");
    if (segment.startsWith('.')) {
      throw new InvalidKeyError(whole, `segment ${JSON.stringify(segment)} starts with '.'`);
    }
    if (segment.includes('\0')) throw new InvalidKeyError(whole, 'contains NUL');
  }
}

/** Checks a byte range of `get` and returns it with `end` defaulted to "to the end". */
export function checkRange(
  key: string,
  start = 0,
  end = Number.POSITIVE_INFINITY,
): { start: number; end: number } {
  if (!Number.isSafeInteger(start) || start < 0) {
    throw new InvalidKeyError(key, `range start ${start}, expected an integer >= 0`);
  }
  if (end !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(end) || end < start)) {
    throw new InvalidKeyError(key, `range end ${end}, expected an integer >= start (${start})`);
  }
  return { start, end };
}

/** Byte order of keys, the order S3 lists in (UTF-16 order differs from it above U+FFFF). */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
