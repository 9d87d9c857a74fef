/**
 * Runs under a file-size limit (RLIMIT_FSIZE), so the disk "fills" at a known size: appends until one
 * is refused, checks the refusal, and reports what was acknowledged.
 *   node full-disk-child.js <dataDir> [replica]
 * With `replica`, the records arrive as a replica's (stored bytes at an offset) instead of appends.
 */
import fs from 'node:fs';
import { AckPolicy, encodeStoredRecords } from '@booblik/protocol';
import { defaultLogConfig } from '../config.js';
import { StorageError } from '../errors.js';
import { Partition } from '../partition.js';
import { batchOf, rec } from './records.js';

// Past the limit the kernel sends SIGXFSZ, whose default action kills the process; ignoring it
// turns the limit into an EFBIG write error, which is what a full disk looks like to the writer.
process.on('SIGXFSZ', () => {});

const { partition } = Partition.open(process.argv[2]!, 'full', 0, {
  ...defaultLogConfig,
  segmentBytesMax: 1 << 20,
});
const asReplica = process.argv[3] === 'replica';
let acked = 0;
for (let i = 0; ; i++) {
  try {
    if (asReplica) {
      await partition.writeReplicated(acked, encodeStoredRecords([rec(i, 300), rec(i, 300)]), 2, false);
      partition.publishCommitted(acked + 2);
      acked += 2;
    } else {
      const result = await partition.append(batchOf([rec(i, 300), rec(i, 300)]), AckPolicy.WRITTEN);
      acked = result.baseOffset + 2;
    }
  } catch (error) {
    const refused = error instanceof StorageError ? `storage-error ${error.code}` : `other ${String(error)}`;
    // Reading still works after the refusal.
    const read = await partition.read(0, 100);
    fs.writeSync(
      1,
      `${JSON.stringify({ acked, refused, hw: partition.highWatermark.value, readBytes: read.bytes })}\n`,
    );
    break;
  }
}
await partition.close();
