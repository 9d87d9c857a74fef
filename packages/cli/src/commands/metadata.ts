import { Connection } from '@booblik/client';
import { brokerAddress, parse } from '../args.js';
import { ExitCode } from '../constants.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { formatTable } from '../table.js';

/** booblik metadata [topic...] */
export async function metadataCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {});
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('metadata'));
    return ExitCode.OK;
  }
  const connection = await Connection.connect(brokerAddress(parsed.string('broker'), io.env), {
    signal: io.signal,
  });
  try {
    const topics = await connection.metadata(...parsed.positionals);
    const rows = [['TOPIC', 'PARTITION', 'LOG_START', 'HIGH_WATERMARK']];
    for (const topic of topics) {
      for (const p of topic.partitions) {
        rows.push([topic.name, String(p.partition), String(p.logStartOffset), String(p.highWatermark)]);
      }
    }
    await out.write(formatTable(rows));
  } finally {
    await connection.close();
  }
  return ExitCode.OK;
}
