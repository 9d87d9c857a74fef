import {
  BrokerError,
  type Connection,
  ErrorCode,
  FragmentLocation,
  type TopicMetadata,
} from '@booblik/client';
import { brokerAddresses, integer, parse, topicName } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { PartitionNotFoundError, TopicNotFoundError, UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { formatTable } from '../table.js';
import { tlsOption } from '../tls.js';

const LOCATION_NAMES: Record<number, string> = {
  [FragmentLocation.LOCAL]: 'local',
  [FragmentLocation.STORE]: 'store',
  [FragmentLocation.BOTH]: 'both',
};

/**
 * The broker's UNKNOWN_TOPIC_OR_PARTITION says "the topic, or its partition": METADATA tells which,
 * so the message names the one that is missing (and the partitions the topic has).
 */
async function whichIsMissing(
  connection: Connection,
  error: unknown,
  topic: string,
  partition: number | undefined,
): Promise<unknown> {
  if (!(error instanceof BrokerError && error.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) return error;
  let described: TopicMetadata | undefined;
  try {
    [described] = await connection.metadata(topic);
  } catch (metadataError) {
    const unknown =
      metadataError instanceof BrokerError && metadataError.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    return unknown ? new TopicNotFoundError([topic]) : error;
  }
  if (described === undefined) return new TopicNotFoundError([topic]);
  if (partition === undefined) return error; // it exists after all: created meanwhile
  return new PartitionNotFoundError(
    topic,
    partition,
    described.partitions.map((p) => p.partition),
  );
}

/** booblik fragments <topic> [--partition N] */
export async function fragmentsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, { partition: { type: 'string' } });
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('fragments'));
    return ExitCode.OK;
  }
  const [topic, ...extra] = parsed.positionals;
  if (topic === undefined) throw new UsageError('fragments: a topic is required');
  if (extra.length > 0) throw new UsageError(`fragments: one topic, got also ${extra.join(' ')}`);
  topicName(topic);
  const partitionText = parsed.string('partition');
  const partition =
    partitionText === undefined ? undefined : integer('--partition', partitionText, 0, 2 ** 31 - 1);
  const connection = await connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
  });
  try {
    const partitions = await connection
      .listFragments(topic, partition, { signal: io.signal })
      .catch(async (error: unknown) => {
        throw await whichIsMissing(connection, error, topic, partition);
      });
    const rows = [['PARTITION', 'FIRST', 'LAST', 'BYTES', 'WHERE', 'PERSISTED']];
    for (const p of partitions) {
      for (const f of p.fragments) {
        rows.push([
          String(p.partition),
          String(f.baseOffset),
          f.endOffset > f.baseOffset ? String(f.endOffset - 1) : '-',
          String(f.sizeBytes),
          LOCATION_NAMES[f.location] ?? String(f.location),
          f.persistedMs < 0 ? '-' : new Date(f.persistedMs).toISOString(),
        ]);
      }
    }
    await out.write(formatTable(rows));
  } finally {
    await connection.close();
  }
  return ExitCode.OK;
}
