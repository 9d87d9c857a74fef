/** booblik partitions move TOPIC PARTITION MEMBER [--abandon-records]: an operator's move in a cluster. */
import { Connection } from '@booblik/client';
import { brokerAddress, integer, parse } from '../args.js';
import { ExitCode } from '../constants.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';

export async function partitionsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, { 'abandon-records': { type: 'boolean' } });
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('partitions'));
    return ExitCode.OK;
  }
  const [sub, topic, partitionText, member, ...extra] = parsed.positionals;
  if (sub !== 'move')
    throw new UsageError(`partitions: expected move, got ${sub === undefined ? 'nothing' : `"${sub}"`}`);
  if (topic === undefined || partitionText === undefined || member === undefined || extra.length > 0) {
    throw new UsageError('partitions move: expected TOPIC PARTITION MEMBER');
  }
  const partition = integer('PARTITION', partitionText, 0);
  const connection = await Connection.connect(brokerAddress(parsed.string('broker'), io.env), {
    signal: io.signal,
  });
  try {
    const { revision } = await connection.movePartition(topic, partition, member, {
      abandonRecords: parsed.flag('abandon-records'),
    });
    await out.write(`moved ${topic}-${partition} to ${member} (revision ${revision})\n`);
    return ExitCode.OK;
  } finally {
    connection.destroy();
  }
}
