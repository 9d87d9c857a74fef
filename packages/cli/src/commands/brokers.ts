/** booblik brokers drain ID: every replicated partition moved off broker ID, each copied before it switches. */
import { BrokerError, ErrorCode, InvalidArgumentRefusal } from '@booblik/client';
import { brokerAddresses, parse } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { inCliWords, UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { tlsOption } from '../tls.js';

/** A drain moves one partition at a time; each may copy its whole log first. */
const MOVE_TIMEOUT_MS = 10 * 60_000;

export async function brokersCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {});
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('brokers'));
    return ExitCode.OK;
  }
  const [sub, member, ...extra] = parsed.positionals;
  if (sub !== 'drain')
    throw new UsageError(`brokers: expected drain, got ${sub === undefined ? 'nothing' : `"${sub}"`}`);
  if (member === undefined || extra.length > 0)
    throw new UsageError('brokers drain: expected ID (a broker id)');
  const connection = await connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
  });
  try {
    const listing = await connection.listTopics('');
    let checked = 0;
    const left: string[] = [];
    for (const topic of listing.topics) {
      for (let p = 0; p < topic.spec.partitions; p++) {
        checked++;
        try {
          // The broker answers at once for a partition ID holds no copy of.
          await connection.movePartition(topic.spec.name, p, member, {
            away: true,
            timeoutMs: MOVE_TIMEOUT_MS,
          });
        } catch (error) {
          if (!(error instanceof BrokerError && error.code === ErrorCode.INVALID_ARGUMENT)) throw error;
          left.push(`${topic.spec.name}-${p}`);
          const why = error instanceof InvalidArgumentRefusal ? inCliWords(error.detail) : error.codeName;
          await out.write(`${topic.spec.name}-${p}: stays on ${member}: ${why}\n`);
        }
      }
    }
    await out.write(
      `${member}: ${checked - left.length} of ${checked} partition(s) off it${left.length > 0 ? `; ${left.length} stay` : ''}\n`,
    );
    return left.length === 0 ? ExitCode.OK : ExitCode.FAILURE;
  } finally {
    connection.destroy();
  }
}
