import { BrokerError, type Client, type PartitionMetadata } from '@booblik/client';
import { ErrorCode, MetadataOffsets } from '@booblik/protocol';
import { OffsetsNotKnownError } from '../errors.js';

/** How often a follower asks again for offsets nobody could give. */
const OFFSETS_RETRY_MS = 1000;

/** A partition as consume starts it: its offsets, and whether they are only what a copy holds. */
export interface DescribedPartition extends PartitionMetadata {
  /** A copy gave them (the primary did not answer): the partition has at least that range. */
  fromCopy: boolean;
}

/**
 * The topic's partitions and their offsets (METADATA v5 where the broker has it, which says when
 * they are not known rather than answer 0 and 0). Offsets nobody knows (no copy of the partition
 * answers: a failover under way, every holder down) end the command with a clear error, or, when
 * following, are asked for again until known.
 */
export async function describePartitions(
  client: Client,
  topic: string,
  options: { follow: boolean; signal: AbortSignal; note: (line: string) => void },
): Promise<DescribedPartition[]> {
  for (let noted = false; ; ) {
    const partitions = await describeOnce(client, topic);
    const unknown = partitions.filter((p) => p === null).length;
    if (unknown === 0) return partitions as DescribedPartition[];
    const ids = partitions.flatMap((p, i) => (p === null ? [i] : []));
    if (!options.follow) throw new OffsetsNotKnownError(topic, ids);
    if (!noted) {
      options.note(
        `${topic}: the offsets of partition(s) ${ids.join(', ')} are not known right now (no broker holding a copy answers); waiting`,
      );
      noted = true;
    }
    await new Promise((resolve) => setTimeout(resolve, OFFSETS_RETRY_MS));
    if (options.signal.aborted) throw options.signal.reason;
  }
}

/** Each partition by id, or null where its offsets are not known. */
async function describeOnce(client: Client, topic: string): Promise<(DescribedPartition | null)[]> {
  try {
    const [described] = (await client.metadataWithOffsets(topic)).topics;
    return (described?.partitions ?? []).map((p) =>
      p.offsets === MetadataOffsets.UNKNOWN
        ? null
        : {
            partition: p.partition,
            logStartOffset: p.logStartOffset,
            highWatermark: p.highWatermark,
            fromCopy: p.offsets === MetadataOffsets.COPY,
          },
    );
  } catch (error) {
    // A broker without METADATA v5 cannot say: its offsets are taken as they are.
    if (!(error instanceof BrokerError && error.code === ErrorCode.UNSUPPORTED_VERSION)) throw error;
    const [described] = await client.metadata(topic);
    return (described?.partitions ?? []).map((p) => ({ ...p, fromCopy: false }));
  }
}
