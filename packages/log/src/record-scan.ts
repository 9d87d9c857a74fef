import { crc32c, recordHeaderBytes } from '@booblik/protocol';

/** Why a scan of stored records stopped before the end of its bytes. */
export type ScanStop =
  | 'end' // every byte was a whole, valid record
  | 'short-header' // fewer than 8 bytes left
  | 'bad-size' // size <= 0
  | 'past-end' // a record that runs past the end
  | 'crc-mismatch';

export interface ScanResult {
  /** Bytes of whole, valid records from the start. */
  validBytes: number;
  records: number;
  stop: ScanStop;
}

/**
 * Walks stored records in buf[start, end), checking each size and CRC-32C, calling `onRecord` with
 * the record's position (relative to `start`) and its size including the header. Stops at the first
 * record that fails a check: what comes after a bad record cannot be trusted.
 */
export function scanStoredRecords(
  buf: Buffer,
  start: number,
  end: number,
  onRecord?: (position: number, bytes: number) => void,
): ScanResult {
  let pos = start;
  let records = 0;
  let stop: ScanStop = 'end';
  while (pos < end) {
    if (end - pos < recordHeaderBytes) {
      stop = 'short-header';
      break;
    }
    const size = buf.readInt32BE(pos);
    if (size <= 0) {
      stop = 'bad-size';
      break;
    }
    const payloadStart = pos + recordHeaderBytes;
    if (size > end - payloadStart) {
      stop = 'past-end';
      break;
    }
    if (crc32c(buf, payloadStart, payloadStart + size) !== buf.readUInt32BE(pos + 4)) {
      stop = 'crc-mismatch';
      break;
    }
    onRecord?.(pos - start, recordHeaderBytes + size);
    records++;
    pos = payloadStart + size;
  }
  return { validBytes: pos - start, records, stop };
}
