import { recordHeaderBytes } from '@booblik/protocol';

/**
 * How many whole stored records `bytes` begins with (at most `max`), and where they end: a read of
 * the log may stop inside its last record, and a replica is sent whole records of one epoch only.
 */
export function wholeRecords(
  bytes: Buffer,
  max = Number.MAX_SAFE_INTEGER,
): { count: number; length: number } {
  let at = 0;
  let count = 0;
  while (count < max && at + recordHeaderBytes <= bytes.length) {
    const next = at + recordHeaderBytes + bytes.readInt32BE(at);
    if (next > bytes.length) break;
    at = next;
    count++;
  }
  return { count, length: at };
}
