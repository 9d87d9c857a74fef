import { crc32c, nativeAddon, recordHeaderBytes } from '@booblik/protocol';
import { CorruptRecordError } from './errors.js';

/**
 * Checks that `stored` (records as a segment holds them: `int32 size, uint32 crc32c(payload),
 * payload`) frames into exactly `count` whole records, each CRC right, noting where each record
 * starts in positions[0..count) and the end in positions[count]. Throws CorruptRecordError naming
 * the offset (`baseOffset` + index) of the first record that fails; nothing is kept of a refusal.
 */
export function frameStoredGroup(
  stored: Buffer,
  count: number,
  baseOffset: number,
  positions: Uint32Array,
): void {
  if (nativeAddon !== null) {
    // One native call checks every size and CRC (a replica's whole group, or a 1 MiB copy); the
    // walk below then only notes where records start. A group that fails is walked again for the error.
    const [validBytes, records] = nativeAddon.scanRecords(stored, 0, stored.length);
    if (validBytes === stored.length && records === count) {
      let at = 0;
      for (let i = 0; i < count; i++) {
        positions[i] = at;
        at += recordHeaderBytes + stored.readInt32BE(at);
      }
      positions[count] = at;
      return;
    }
  }
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const offset = baseOffset + i;
    if (stored.length - pos < recordHeaderBytes) {
      throw new CorruptRecordError(
        offset,
        pos === stored.length ? 'count-mismatch' : 'short-header',
        pos === stored.length
          ? `the bytes hold ${i} records, expected ${count}`
          : `${stored.length - pos} bytes left, a record header takes ${recordHeaderBytes}`,
      );
    }
    const size = stored.readInt32BE(pos);
    if (size <= 0) throw new CorruptRecordError(offset, 'bad-size', `size ${size}, expected > 0`);
    const payloadStart = pos + recordHeaderBytes;
    if (size > stored.length - payloadStart) {
      throw new CorruptRecordError(
        offset,
        'past-end',
        `size ${size} runs past the group's end (${stored.length - payloadStart} bytes left)`,
      );
    }
    if (crc32c(stored, payloadStart, payloadStart + size) !== stored.readUInt32BE(pos + 4)) {
      throw new CorruptRecordError(offset, 'crc-mismatch', 'its CRC-32C does not match its payload');
    }
    positions[i] = pos;
    pos = payloadStart + size;
  }
  if (pos !== stored.length) {
    throw new CorruptRecordError(
      baseOffset + count,
      'count-mismatch',
      `${stored.length - pos} bytes follow the ${count} records the group declares`,
    );
  }
  positions[count] = pos;
}
