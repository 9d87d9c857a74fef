/**
 * booblik partitions move TOPIC PARTITION MEMBER [--abandon-records]: an operator's move in a cluster.
 * booblik partitions elect TOPIC PARTITION MEMBER --unclean: a primary forced when none is in sync.
 */
import { InvalidArgumentRefusal } from '@booblik/client';
import { brokerAddresses, integer, parse } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { MoveRefusedError, UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { tlsOption } from '../tls.js';
import { watchCatchUp } from './catch-up-progress.js';

export async function partitionsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, { 'abandon-records': { type: 'boolean' }, unclean: { type: 'boolean' } });
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('partitions'));
    return ExitCode.OK;
  }
  const [sub, topic, partitionText, member, ...extra] = parsed.positionals;
  if (sub !== 'move' && sub !== 'elect')
    throw new UsageError(
      `partitions: expected move or elect, got ${sub === undefined ? 'nothing' : `"${sub}"`}`,
    );
  if (topic === undefined || partitionText === undefined || member === undefined || extra.length > 0) {
    throw new UsageError(`partitions ${sub}: expected TOPIC PARTITION MEMBER`);
  }
  if (sub === 'elect' && !parsed.flag('unclean')) {
    throw new UsageError(
      'partitions elect: --unclean is required: it makes a replica that is out of sync the primary, and loses what only the in-sync replicas held',
    );
  }
  const partition = integer('PARTITION', partitionText, 0);
  const tls = tlsOption(parsed, io.env);
  const connection = await connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tls,
  });
  const progress =
    sub === 'move'
      ? watchCatchUp(
          () => connection.redial(),
          topic,
          partition,
          member,
          (line) => io.stderr.write(line),
        )
      : undefined;
  try {
    const { revision } = await connection
      .movePartition(topic, partition, member, {
        abandonRecords: parsed.flag('abandon-records'),
        unclean: sub === 'elect',
        timeoutMs: 10 * 60_000,
      })
      .catch((error: unknown) => {
        if (!(error instanceof InvalidArgumentRefusal)) throw error;
        const what =
          sub === 'elect'
            ? `electing ${member} primary of ${topic}-${partition}`
            : `moving ${topic}-${partition} to ${member}`;
        throw new MoveRefusedError(what, error.detail);
      });
    await out.write(
      sub === 'elect'
        ? `elected ${member} primary of ${topic}-${partition}, uncleanly (revision ${revision})\n`
        : `moved ${topic}-${partition} to ${member} (revision ${revision})\n`,
    );
    return ExitCode.OK;
  } finally {
    await progress?.stop();
    connection.destroy();
  }
}
