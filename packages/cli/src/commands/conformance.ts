/**
 * The conformance kit's client contract: `booblik conformance <verb> [args...]`, printing key=value
 * lines. A broker refusal is a verb carried out: it prints `error=<CODE_NAME>` and exits 0. The
 * broker judges the content (an empty record is sent as given, so the broker's refusal is what shows).
 */
import {
  AckPolicy,
  BrokerError,
  type Connection,
  INT32_MAX,
  RevisionMismatchError,
  type TopicListing,
} from '@booblik/client';
import { ackPolicy, brokerAddresses, integer, parse, positionals } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { tlsOption } from '../tls.js';

/** What this client declares to the harness: the original contract's roles, then the added ones under extras=. */
const CAPABILITIES = ['roles=producer,consumer', 'extras=topics', 'name=typescript'];

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
  const connection = await connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
  });
  try {
    await print(...(await call(connection)));
  } catch (error) {
    if (!(error instanceof BrokerError)) throw error;
    await print(`error=${error.codeName}`);
    if (error instanceof RevisionMismatchError) {
      await print(
        `topic=${error.topic}`,
        `expectedRevision=${error.expectedRevision}`,
        `actualRevision=${error.actualRevision}`,
      );
    }
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

  'topics-apply'(args) {
    const [name, partitionsText, labelsText, revisionText] = positionals(args, [
      'name',
      'partitions',
      'k=v,...|-',
      'expectedRevision',
    ]) as [string, string, string, string];
    const partitions = integer('partitions', partitionsText, 1, INT32_MAX);
    const labels = labelsArg(labelsText);
    const revision = integer('expectedRevision', revisionText, -1);
    return async (connection) => {
      const applied = await connection.applyTopics([
        { op: 'upsert', spec: { name, partitions, labels, revision } },
      ]);
      return [`revision=${applied.revision}`];
    };
  },

  'topics-delete'(args) {
    const [name, revisionText] = positionals(args, ['name', 'expectedRevision']) as [string, string];
    const expectedRevision = integer('expectedRevision', revisionText, -1);
    return async (connection) => {
      const applied = await connection.applyTopics([{ op: 'delete', name, expectedRevision }]);
      return [`revision=${applied.revision}`];
    };
  },

  'topics-list'(args) {
    const [selector] = positionals(args, ['selector']) as [string];
    return async (connection) => listingLines(await connection.listTopics(selector));
  },
};

/** `k=v,k=v` or `-` for none. */
function labelsArg(text: string): Record<string, string> {
  if (text === '-') return {};
  const labels: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at < 0) throw new UsageError(`labels: "${pair}", expected k=v`);
    labels[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return labels;
}

function listingLines(listing: TopicListing): string[] {
  const lines = [`revision=${listing.revision}`];
  for (const { spec } of listing.topics) {
    const labels = Object.entries(spec.labels)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    lines.push(`topic=${spec.name} ${spec.partitions} ${spec.revision} ${labels || '-'}`);
  }
  return lines;
}

function hex(name: string, text: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text))
    throw new UsageError(`${name}: "${text}", expected hex digits in pairs`);
  return Buffer.from(text, 'hex');
}
