/**
 * The process the crash test kills: several producers append self-identifying records to one
 * partition, FORCED and WRITTEN mixed, and report every acknowledgement on stdout the moment it
 * arrives (a synchronous write, so a reported ack was really received before the kill).
 *   node crash-child.js <dataDir> <segmentBytesMax> <firstSequence>
 */
import fs from 'node:fs';
import { AckPolicy } from '@booblik/protocol';
import { defaultLogConfig } from '../config.js';
import { Partition } from '../partition.js';
import { batchOf } from './records.js';
import { fillerBytesFor, selfCheckingPayload } from './self-checking.js';

const [dataDir, segmentBytesMax, firstSequence] = process.argv.slice(2);
const { partition } = Partition.open(dataDir!, 'crash', 0, {
  ...defaultLogConfig,
  segmentBytesMax: Number(segmentBytesMax),
});
let sequence = Number(firstSequence);

async function produce(producer: number): Promise<never> {
  for (let round = 0; ; round++) {
    const count = 1 + ((sequence * 31 + producer) % 12);
    const first = sequence;
    const payloads = Array.from({ length: count }, () => {
      const s = sequence++;
      return selfCheckingPayload(producer, s, fillerBytesFor(s));
    });
    const ack = (producer + round) % 3 === 0 ? AckPolicy.FORCED : AckPolicy.WRITTEN;
    const result = await partition.append(batchOf(payloads), ack);
    fs.writeSync(1, `ack ${ack} ${result.baseOffset} ${count} ${producer} ${first}\n`);
  }
}

fs.writeSync(1, `ready ${partition.highWatermark.value}\n`);
for (let p = 0; p < 4; p++) void produce(p);
