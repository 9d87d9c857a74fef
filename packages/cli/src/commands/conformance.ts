/**
 * The conformance kit's client contract: `booblik conformance <verb> [args...]`, printing key=value
 * lines. A broker refusal is a verb carried out: it prints `error=<CODE_NAME>` and exits 0. The
 * broker judges the content (an empty record is sent as given, so the broker's refusal is what shows).
 */
import { AckPolicy, BrokerError, Connection, INT32_MAX } from '@booblik/client';
import { ackPolicy, brokerAddress, integer, parse, positionals } from '../args.js';
import { ExitCode } from '../constants.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';

/** What this client declares to the harness. */
const CAPABILITIES = ['roles=producer,consumer', 'name=typescript'];

export async function conformanceCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {});
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('conformance'));
    return ExitCode.OK;
  }
  const [verb, ...rest] = parsed.positionals;
  const print = (...lines: string[]) => out.write(lines.map((l) => `${l}\n`).join(''));
  if (verb === 'capabilities') {
    positionals(rest, []);
    await print(...CAPABILITIES);
    return ExitCode.OK;
  }
  const run = verbs[verb ?? ''];
  if (!run) {
    throw new UsageError(
      `conformance: verb "${verb ?? ''}", expected ${['capabilities', ...Object.keys(verbs)].join(', ')}`,
    );
  }
  // Arguments are checked before dialing: a malformed call fails the same with or without a broker.
  const call = run(rest);
  const connection = await Connection.connect(brokerAddress(parsed.string('broker'), io.env), {
    signal: io.signal,
  });
  try {
    await print(...(await call(connection)));
  } catch (error) {
    if (!(error instanceof BrokerError)) throw error;
    await print(`error=${error.codeName}`);
  } finally {
    await connection.close();
  }
  return ExitCode.OK;
}

/** Each verb checks its arguments, then returns the work to do on a connection and the lines it prints. */
const verbs: Record<string, (args: string[]) => (connection: Connection) => Promise<string[]>> = {
  metadata(args) {
    const [topic] = positionals(args, ['topic']) as [string];
    return async (connection) => {
      const topics = await connection.metadata(topic);
      const found = topics.find((t) => t.name === topic);
      return (found?.partitions ?? []).map(
        (p) => `partition=${p.partition} ${p.logStartOffset} ${p.highWatermark}`,
      );
    };
  },

  produce(args) {
    const [topic, partitionText, ackText, hexList] = positionals(args, [
      'topic',
      'partition',
      'ack',
      'hex,...',
    ]) as [string, string, string, string];
    const partition = integer('partition', partitionText, 0, INT32_MAX);
    const ack = ackPolicy('ack', ackText);
    // "" is one zero-length record, "aa,,bb" three records: an empty element is a record too.
    const records = hexList.split(',').map((h, i) => hex(`records[${i}]`, h));
    return async (connection) => {
      const result = await connection.produce(topic, partition, records, { ack });
      return result === null
        ? []
        : [`baseOffset=${result.baseOffset}`, `logEndOffset=${result.logEndOffset}`];
    };
  },

  'produce-keyed'(args) {
    const [topic, keyHex, payloadHex] = positionals(args, ['topic', 'keyHex', 'payloadHex']) as [
      string,
      string,
      string,
    ];
    const key = hex('keyHex', keyHex);
    const payload = hex('payloadHex', payloadHex);
    return async (connection) => {
      const handle = await connection.topic(topic);
      const sent = await handle.send(payload, { key, ack: AckPolicy.WRITTEN });
      return [`partition=${sent.partition}`, `baseOffset=${sent.offset}`];
    };
  },

  fetch(args) {
    const [topic, partitionText, offsetText, maxBytesText] = positionals(args, [
      'topic',
      'partition',
      'offset',
      'maxBytes',
    ]) as [string, string, string, string];
    const partition = integer('partition', partitionText, 0, INT32_MAX);
    const offset = integer('offset', offsetText, 0);
    const maxBytes = integer('maxBytes', maxBytesText, 1, INT32_MAX);
    return async (connection) => {
      const result = await connection.fetch({ topic, partition, offset, maxBytes, maxWaitMs: 0 });
      const lines = [`highWatermark=${result.highWatermark}`];
      // A record that can never fit: its size (from its header; -1 when even that was cut) and no records.
      if (result.recordExceedsMaxBytes)
        return [...lines, `recordExceedsMaxBytes=${result.truncatedRecordBytes}`];
      return [...lines, ...result.records.map((r) => `record=${r.payload.toString('hex')}`)];
    };
  },
};

function hex(name: string, text: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text))
    throw new UsageError(`${name}: "${text}", expected hex digits in pairs`);
  return Buffer.from(text, 'hex');
}
