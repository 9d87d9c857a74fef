import { MetadataOffsets, type MetadataResponseV4, ReplicaFlag, type RouteV2 } from '@booblik/protocol';
import { brokerAddresses, parse, topicName } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { formatTable } from '../table.js';
import { tlsOption } from '../tls.js';
import { metadataSpeaks } from '../versions.js';

const BOTH = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;

/**
 * booblik metadata [topic...]: partitions and offsets; from a cluster broker (METADATA v4) also each
 * partition's epoch, primary, in-sync replicas, the others, and the largest lag behind the primary.
 * With METADATA v5, offsets a copy gave (the primary did not answer) are marked, and offsets nobody
 * knows are shown as unknown rather than as 0.
 */
export async function metadataCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {});
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('metadata'));
    return ExitCode.OK;
  }
  for (const topic of parsed.positionals) topicName(topic);
  const connection = await connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
  });
  try {
    const has = await metadataSpeaks(connection);
    const answer: (MetadataResponseV4 & { topics: { partitions: { offsets?: number }[] }[] }) | undefined =
      has('offsetSources')
        ? await connection.metadataWithOffsets(parsed.positionals)
        : has('replicaRoutes')
          ? await connection.metadataWithReplicas(parsed.positionals)
          : undefined;
    // One node has one replica without a member id: its table stays the four columns it always had.
    const cluster = answer?.topics.some((t) =>
      t.partitions.some((p) => p.route.replicas.some((r) => r.member !== '')),
    );
    if (answer !== undefined && cluster) {
      const rows = [
        [
          'TOPIC',
          'PARTITION',
          'LOG_START',
          'HIGH_WATERMARK',
          'EPOCH',
          'PRIMARY',
          'IN_SYNC',
          'OUT_OF_SYNC',
          'LAG',
        ],
      ];
      for (const topic of answer.topics) {
        for (const p of topic.partitions) {
          rows.push([
            topic.name,
            String(p.partition),
            ...offsetCells(p),
            String(p.route.epoch),
            ...replicaCells(p.route),
          ]);
        }
      }
      await out.write(formatTable(rows));
      return ExitCode.OK;
    }
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

/**
 * LOG_START and HIGH_WATERMARK cells: as answered; `>=N` when a copy gave them (the partition has at
 * least that, the primary may have more); `unknown` when nobody could say.
 */
function offsetCells(p: { logStartOffset: number; highWatermark: number; offsets?: number }): string[] {
  if (p.offsets === MetadataOffsets.UNKNOWN) return ['unknown', 'unknown'];
  const hw = p.offsets === MetadataOffsets.COPY ? `>=${p.highWatermark}` : String(p.highWatermark);
  return [String(p.logStartOffset), hw];
}

/** PRIMARY, IN_SYNC, OUT_OF_SYNC and LAG cells: members as `id@zone`, "-" for none. */
function replicaCells(route: RouteV2): string[] {
  const name = (r: RouteV2['replicas'][number]) => (r.zone === '' ? r.member : `${r.member}@${r.zone}`);
  const primary = route.replicas.find((r) => r.address !== '' && r.address === route.primary);
  const inSync = route.replicas.filter((r) => (r.flags & BOTH) === BOTH).map(name);
  const out = route.replicas
    .filter((r) => (r.flags & BOTH) !== BOTH)
    .map(
      (r) =>
        `${name(r)}(${(r.flags & ReplicaFlag.LIVE) === 0 ? 'down' : `${r.lagRecords < 0 ? '?' : r.lagRecords} behind`})`,
    );
  const lags = route.replicas.filter((r) => r !== primary);
  const lag =
    lags.length === 0
      ? '-'
      : lags.some((r) => r.lagRecords < 0)
        ? '?'
        : `${Math.max(...lags.map((r) => r.lagRecords))} records / ${Math.max(...lags.map((r) => r.lagMillis))} ms`;
  return [primary === undefined ? '-' : name(primary), inSync.join(',') || '-', out.join(',') || '-', lag];
}
