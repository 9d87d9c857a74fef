import { AckPolicy, INT32_MAX, OFFSET_UNKNOWN, Producer, ProducerClosedError } from '@booblik/client';
import { ackPolicy, brokerAddresses, integer, parse, positionals, topicName } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { readLengthPrefixed, readLines, recordBytesMaxFor } from '../input/records.js';
import { type Io, Output } from '../io.js';
import { Progress } from '../progress.js';
import { OffsetSpans } from '../summary.js';
import { tlsOption } from '../tls.js';

/**
 * booblik produce <topic>: records from stdin through a Producer (batched, several requests in
 * flight, backpressure from its bounded queue). Stops reading at the first failed record: the rest
 * would most likely fail the same way.
 */
export async function produceCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {
    key: { type: 'string' },
    partition: { type: 'string' },
    ack: { type: 'string' },
    'length-prefixed': { type: 'boolean' },
  });
  const err = new Output(io.stderr);
  if (parsed.flag('help')) {
    await new Output(io.stdout).write(helpFor('produce'));
    return ExitCode.OK;
  }
  const topic = topicName(positionals(parsed.positionals, ['topic'])[0]!);
  const key = parsed.string('key');
  const partitionText = parsed.string('partition');
  const ackText = parsed.string('ack');
  if (key !== undefined && partitionText !== undefined) {
    throw new UsageError('--key and --partition both pick the partition: give one of them');
  }
  const partition =
    partitionText === undefined ? undefined : integer('--partition', partitionText, 0, INT32_MAX);
  const ack = ackText === undefined ? undefined : ackPolicy('--ack', ackText);
  const brokers = brokerAddresses(parsed.string('broker'), io.env);

  const connection = await connectFirst(brokers, {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
  });
  // The partition is picked here, as the producer would (FNV-1a of the key, else round robin), so
  // that the summary can say which offsets each partition got.
  let route: (() => number) | undefined;
  if (partition === undefined) {
    try {
      const handle = await connection.topic(topic);
      route = () => handle.partitionFor(key);
    } catch (error) {
      await connection.close();
      throw error;
    }
  }
  const producer = new Producer(connection, { ack });
  const spans = new OffsetSpans();
  const progress = new Progress((text) => io.stderr.write(text), io.stderrIsTty);
  const recordBytesMax = recordBytesMaxFor(topic);
  const records = parsed.flag('length-prefixed')
    ? readLengthPrefixed(io.stdin, recordBytesMax)
    : readLines(io.stdin, recordBytesMax);
  let sent = 0;
  let acknowledged = 0;
  let failed = 0;
  let skipped = 0;
  let firstError: Error | undefined;
  try {
    for await (const record of records) {
      if (firstError || io.signal.aborted) break;
      if (record.length === 0) {
        skipped++; // the broker refuses an empty record, and with it the whole batch it travels in
        continue;
      }
      await producer.ready();
      if (producer.state !== 'open') break;
      const to = partition ?? route!();
      producer.send(topic, record, { partition: to }).then(
        (offset) => {
          acknowledged++;
          if (offset !== OFFSET_UNKNOWN) spans.add(to, offset);
        },
        (error: Error) => {
          failed++;
          firstError ??= error;
        },
      );
      sent++;
      progress.update(sent, acknowledged);
    }
  } finally {
    await producer.close();
    progress.done();
  }
  if (skipped > 0) {
    await err.write(`booblik: skipped ${skipped} empty record(s): a record must hold at least one byte\n`);
  }
  if (acknowledged > 0 || !firstError) {
    await err.write(`${spans.summary(topic, acknowledged, ack === AckPolicy.NONE)}\n`);
  }
  if (firstError) {
    const cause =
      firstError instanceof ProducerClosedError && firstError.cause ? firstError.cause : firstError;
    await err.write(
      `booblik: ${failed} of ${sent} record(s) failed (${acknowledged} acknowledged): ${(cause as Error).message}\n`,
    );
    return ExitCode.FAILURE;
  }
  return ExitCode.OK;
}
