import { Client, DEFAULT_MAX_BYTES, INT32_MAX, RecordExceedsMaxBytesError } from '@booblik/client';
import { brokerAddresses, integer, oneOf, parse, positionals, startOffset, topicName } from '../args.js';
import { ExitCode } from '../constants.js';
import {
  MaxBytesTooSmallError,
  OffsetOutOfRangeError,
  PartitionNotFoundError,
  UsageError,
} from '../errors.js';
import { type Format, formatRecord, formats } from '../format.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';

/** Without --follow a run reads a finite range, so a lost connection is retried a few times only. */
const RECONNECT_ATTEMPTS_BOUNDED = 3;

/**
 * booblik consume <topic>: prints the records of one partition. Without --follow it reads up to the
 * high watermark that METADATA reported at start and stops there, even if more records arrive.
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
  const partition = partitionText === undefined ? 0 : integer('--partition', partitionText, 0, INT32_MAX);
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
  const connection = await Client.connect(brokers, {
    signal: io.signal,
    ...(preferZone === undefined ? {} : { preferZone }),
  });
  try {
    const [described] = await connection.metadata(topic);
    const offsets = described?.partitions.find((p) => p.partition === partition);
    if (!offsets) {
      throw new PartitionNotFoundError(topic, partition, described?.partitions.map((p) => p.partition) ?? []);
    }
    const start =
      from === 'earliest' ? offsets.logStartOffset : from === 'latest' ? offsets.highWatermark : from;
    if (start < offsets.logStartOffset || start > offsets.highWatermark) {
      throw new OffsetOutOfRangeError(start, offsets.logStartOffset, offsets.highWatermark);
    }
    const end = follow ? Number.POSITIVE_INFINITY : offsets.highWatermark;
    if (start >= end) return ExitCode.OK;
    const consumer = connection.consumer(topic, partition, start, {
      maxBytes,
      // Reading up to a known end: answer at once rather than hold the fetch for records.
      ...(follow ? {} : { maxWaitMs: 0 }),
      reconnectAttemptsMax: follow ? Number.POSITIVE_INFINITY : RECONNECT_ATTEMPTS_BOUNDED,
      signal: io.signal,
    });
    let printed = 0;
    try {
      for await (const record of consumer) {
        if (record.offset >= end) break;
        if (!(await out.write(formatRecord(record, format)))) break; // nobody reads stdout any more
        if (++printed >= maxRecords || consumer.position >= end) break;
      }
    } catch (error) {
      if (error instanceof RecordExceedsMaxBytesError) {
        throw new MaxBytesTooSmallError(error.offset, error.recordBytes, error.maxBytes);
      }
      throw error;
    } finally {
      await consumer.close();
    }
  } finally {
    await connection.close();
  }
  return ExitCode.OK;
}
