/**
 * Object names in a store, per partition under `<topic>/<partition>/`:
 *   `<first offset, 20 digits>-<last offset, 20 digits>-<sha-256 of the bytes, 16 hex>.log`
 *   `manifest.json`
 * so a listing alone tells each fragment's partition, offsets and checksum (the repair path), and
 * names sort by offset. The same bytes always get the same name: an upload retried after a crash
 * replaces its own object instead of adding a duplicate.
 */

const OFFSET_DIGITS = 20;
const CHECKSUM_HEX = 16;
const FRAGMENT_NAME = /^(\d{20})-(\d{20})-([0-9a-f]{16})\.log$/;

export function partitionPrefix(topic: string, partition: number): string {
  return `${topic}/${partition}/`;
}

export function manifestKey(topic: string, partition: number): string {
  return `${partitionPrefix(topic, partition)}manifest.json`;
}

export function fragmentKey(
  topic: string,
  partition: number,
  baseOffset: number,
  endOffset: number,
  checksumHex: string,
): string {
  const first = String(baseOffset).padStart(OFFSET_DIGITS, '0');
  const last = String(endOffset - 1).padStart(OFFSET_DIGITS, '0');
  return `${partitionPrefix(topic, partition)}${first}-${last}-${checksumHex.slice(0, CHECKSUM_HEX)}.log`;
}

export interface ParsedFragmentKey {
  baseOffset: number;
  endOffset: number;
  checksumHex: string;
}

/** The offsets and checksum a fragment's key names, or null for any other object. */
export function parseFragmentKey(key: string, prefix: string): ParsedFragmentKey | null {
  if (!key.startsWith(prefix)) return null;
  const match = FRAGMENT_NAME.exec(key.slice(prefix.length));
  if (match === null) return null;
  const baseOffset = Number(match[1]);
  const last = Number(match[2]);
  if (!Number.isSafeInteger(baseOffset) || !Number.isSafeInteger(last) || last < baseOffset) return null;
  return { baseOffset, endOffset: last + 1, checksumHex: match[3]! };
}
