import {
  Client,
  type ClientOptions,
  type ConsumerRecord,
  DEFAULT_MAX_BYTES,
  INT32_MAX,
} from '@booblik/client';
import {
  brokerAddresses,
  integer,
  oneOf,
  parse,
  positionals,
  type StartOffset,
  startOffset,
  topicName,
} from '../args.js';
import { ExitCode, FOLLOW_ROUTE_ATTEMPTS_MAX } from '../constants.js';
import { type DescribedPartition, describePartitions } from '../consume/describe.js';
import { watchPartitions } from '../consume/new-partitions.js';
import { type ReadContext, readPartition } from '../consume/partition-reader.js';
import { authOption } from '../credentials.js';
import { OffsetOutOfRangeError, OffsetPastCopyError, PartitionNotFoundError, UsageError } from '../errors.js';
import { type Format, formatRecord, formats } from '../format.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { tlsOption } from '../tls.js';

/**
 * booblik consume <topic>: prints the records of every partition of the topic as they arrive (one
 * partition with --partition). Without --follow each partition is read up to the high watermark
 * METADATA reported at start, and the command stops there, even if more records arrive. With
 * --follow it keeps reading, waits through failovers, and reads partitions added meanwhile.
 */
export async function consumeCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {
    partition: { type: 'string' },
    from: { type: 'string' },
    follow: { type: 'boolean' },
    format: { type: 'string' },
    'max-records': { type: 'string' },
    'max-bytes': { type: 'string' },
    'prefer-zone': { type: 'string' },
  });
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('consume'));
    return ExitCode.OK;
  }
  const topic = topicName(positionals(parsed.positionals, ['topic'])[0]!);
  const partitionText = parsed.string('partition');
  const formatText = parsed.string('format');
  const maxRecordsText = parsed.string('max-records');
  const maxBytesText = parsed.string('max-bytes');
  const only = partitionText === undefined ? undefined : integer('--partition', partitionText, 0, INT32_MAX);
  const from = startOffset('--from', parsed.string('from') ?? 'earliest');
  const format: Format = formatText === undefined ? 'text' : oneOf('--format', formatText, formats);
  const maxRecords =
    maxRecordsText === undefined ? Number.POSITIVE_INFINITY : integer('--max-records', maxRecordsText, 1);
  const maxBytes =
    maxBytesText === undefined ? DEFAULT_MAX_BYTES : integer('--max-bytes', maxBytesText, 1, INT32_MAX);
  const follow = parsed.flag('follow');
  const brokers = brokerAddresses(parsed.string('broker'), io.env);
  const preferZone = parsed.string('prefer-zone');
  if (preferZone === '') throw new UsageError('--prefer-zone: expected a zone name');

  // A client that follows routes: it bootstraps from any of the brokers given, reads each partition
  // from its primary (with a zone, from the in-sync replica there: FETCH v4) and follows failovers.
  const clientOptions: ClientOptions = {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
    ...(follow ? { routeAttemptsMax: FOLLOW_ROUTE_ATTEMPTS_MAX } : {}),
    ...(preferZone === undefined ? {} : { preferZone }),
  };
  const client = await Client.connect(brokers, clientOptions);
  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  try {
    const note = (line: string) => io.stderr.write(`booblik: ${line}\n`);
    const partitions = await describePartitions(client, topic, { follow, signal, note });
    const chosen = only === undefined ? partitions : partitions.filter((p) => p.partition === only);
    if (only !== undefined && chosen.length === 0) {
      throw new PartitionNotFoundError(
        topic,
        only,
        partitions.map((p) => p.partition),
      );
    }
    if (typeof from === 'number' && chosen.length > 1) {
      throw new UsageError(
        `--from ${from}: an offset is a position in one partition, and topic ${topic} has ${chosen.length}: ` +
          'give --partition too (earliest, latest and -N apply to each partition)',
      );
    }
    const ranges = chosen.map((p) => ({
      partition: p.partition,
      start: startOf(from, p),
      end: follow ? Number.POSITIVE_INFINITY : p.highWatermark,
    }));

    let printed = 0;
    const ctx: ReadContext = {
      client,
      // Several partitions followed at once: each holds its long fetches on connections of its own.
      ...(follow && (only === undefined || chosen.length > 1)
        ? { ownClient: () => Client.connect(brokers, clientOptions) }
        : {}),
      topic,
      follow,
      maxBytes,
      signal,
      emit: async (record: ConsumerRecord) => {
        if (printed >= maxRecords) return false;
        printed++;
        const more = (await out.write(formatRecord(record, format))) && printed < maxRecords;
        if (!more) stop.abort(); // enough, or nobody reads stdout any more: every reader stops
        return more;
      },
      note,
    };
    let failure: unknown;
    const readers: Promise<void>[] = [];
    const read = (partition: number, start: number, end: number) => {
      readers.push(
        readPartition(ctx, partition, start, end).catch((error: unknown) => {
          failure ??= error;
          stop.abort();
        }),
      );
    };
    for (const r of ranges) if (r.start < r.end) read(r.partition, r.start, r.end);
    if (follow) {
      // A partition added while following is read from its first record: all of it is new.
      const added = only === undefined ? (p: number) => read(p, 0, Number.POSITIVE_INFINITY) : () => {};
      await watchPartitions(ctx, partitions.length, added).catch((error: unknown) => {
        failure ??= error;
        stop.abort();
      });
    }
    // No reader is added once the watch is over: these are all of them.
    await Promise.all(readers);
    if (failure !== undefined && !io.signal.aborted) throw failure;
  } finally {
    stop.abort();
    await client.close();
  }
  return ExitCode.OK;
}

/** The first offset to read of one partition, checked against what it holds. */
function startOf(from: StartOffset, offsets: DescribedPartition): number {
  const { logStartOffset, highWatermark } = offsets;
  if (from === 'earliest') return logStartOffset;
  if (from === 'latest') return highWatermark;
  if (typeof from === 'object') return Math.max(logStartOffset, highWatermark - from.last);
  // Past what a copy holds is not past the partition's end: only its primary could say.
  if (from > highWatermark && offsets.fromCopy)
    throw new OffsetPastCopyError(from, logStartOffset, highWatermark);
  if (from < logStartOffset || from > highWatermark) {
    throw new OffsetOutOfRangeError(from, logStartOffset, highWatermark);
  }
  return from;
}
