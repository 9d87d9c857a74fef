import { type EpochEntry, type Fragment, type Logger, scanStoredRecords, thinIndex } from '@booblik/log';
import { ObjectNotFoundError, type ObjectStore } from '@booblik/store';
import { bytesChecksum } from './checksum.js';
import { manifestKey, parseFragmentKey, partitionPrefix } from './object-names.js';

/** The manifest's format; a reader refuses others rather than guessing. */
export const MANIFEST_FORMAT = 1;

/**
 * What a partition has in the store: its fragments, contiguous, oldest first. One object per
 * partition, replaced whole by each update: a put is atomic for readers on every store (file://
 * writes a temporary file and renames it; an S3 PUT is atomic), so a crash leaves the previous
 * manifest or the new one, never a torn one. Numbered versions written with put-if-absent would
 * guard against two writers, but a partition has one (the data directory's lock on one node, the
 * primary in a cluster), and one object keeps a restore to a single GET.
 */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  topic: string;
  partition: number;
  /** Incremented by every update, so two copies tell which is newer. */
  generation: number;
  fragments: Fragment[];
  /**
   * The partition's epoch history when this was written (absent in a manifest from before epochs
   * were kept: none). A restore on an empty disk begins the epoch after its newest.
   */
  epochs?: EpochEntry[];
  /**
   * The partition's high watermark when this was written: records below it were readable. A restore
   * reports the offsets from the fragments' end up to it as lost (absent: not known).
   */
  highWatermark?: number;
}

export function emptyManifest(topic: string, partition: number): Manifest {
  return { format: MANIFEST_FORMAT, topic, partition, generation: 0, fragments: [] };
}

export async function saveManifest(store: ObjectStore, manifest: Manifest): Promise<void> {
  manifest.generation++;
  await store.put(manifestKey(manifest.topic, manifest.partition), Buffer.from(JSON.stringify(manifest)));
}

/**
 * The partition's manifest; when it is missing or unreadable, rebuilt from a listing of the store
 * (each fragment read and checked record by record) and written back. Store errors propagate.
 */
export async function loadManifest(
  store: ObjectStore,
  topic: string,
  partition: number,
  logger: Logger,
): Promise<{ manifest: Manifest; rebuilt: boolean }> {
  const key = manifestKey(topic, partition);
  let problem: string;
  try {
    const manifest = parseManifest(await store.get(key), topic, partition);
    if (typeof manifest !== 'string') return { manifest, rebuilt: false };
    problem = manifest;
  } catch (error) {
    if (!(error instanceof ObjectNotFoundError)) throw error;
    problem = 'missing';
  }
  const manifest = await rebuildFromListing(store, topic, partition, logger);
  if (manifest.fragments.length > 0 || problem !== 'missing') {
    logger.warn(
      `${topic}-${partition}: store manifest ${problem}; rebuilt from a listing: ${manifest.fragments.length} fragment(s)`,
    );
    await saveManifest(store, manifest);
  }
  return { manifest, rebuilt: true };
}

/**
 * The partition's manifest as the store holds it, or null when it is missing or cannot be used: for a
 * reader that must not repair it (a replica: the primary writes it). Store errors propagate.
 */
export async function readManifest(
  store: ObjectStore,
  topic: string,
  partition: number,
): Promise<Manifest | null> {
  try {
    const manifest = parseManifest(await store.get(manifestKey(topic, partition)), topic, partition);
    return typeof manifest === 'string' ? null : manifest;
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return null;
    throw error;
  }
}

/** The manifest, or why it cannot be used. */
function parseManifest(bytes: Buffer, topic: string, partition: number): Manifest | string {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  const m = value as Partial<Manifest>;
  if (m?.format !== MANIFEST_FORMAT)
    return `format ${JSON.stringify(m?.format)}, expected ${MANIFEST_FORMAT}`;
  if (m.topic !== topic || m.partition !== partition) return `names ${m.topic}-${m.partition}`;
  if (!Number.isSafeInteger(m.generation) || !Array.isArray(m.fragments)) return 'malformed';
  let expected: number | null = null;
  for (const f of m.fragments) {
    if (!isFragment(f)) return 'malformed fragment entry';
    if (expected !== null && f.baseOffset !== expected) return `a gap before offset ${f.baseOffset}`;
    expected = f.endOffset;
  }
  if (m.highWatermark !== undefined && !(Number.isSafeInteger(m.highWatermark) && m.highWatermark >= 0))
    return `highWatermark ${JSON.stringify(m.highWatermark)}`;
  if (m.epochs !== undefined && !isEpochHistory(m.epochs)) return 'malformed epochs';
  return m as Manifest;
}

/** Epochs that increase from 1, with starts that never go back (the epochs file's rules). */
function isEpochHistory(epochs: unknown): epochs is EpochEntry[] {
  if (!Array.isArray(epochs)) return false;
  let before: EpochEntry = { epoch: 0, startOffset: 0 };
  for (const e of epochs as EpochEntry[]) {
    if (!Number.isSafeInteger(e?.epoch) || !Number.isSafeInteger(e?.startOffset)) return false;
    if (e.epoch <= before.epoch || e.startOffset < before.startOffset) return false;
    before = e;
  }
  return true;
}

function isFragment(f: unknown): f is Fragment {
  const x = f as Fragment;
  return (
    typeof x?.key === 'string' &&
    [x.baseOffset, x.endOffset, x.sizeBytes, x.lastWriteMs, x.persistedMs].every(Number.isSafeInteger) &&
    x.endOffset > x.baseOffset &&
    typeof x.index === 'object' &&
    Array.isArray(x.index.relOffsets) &&
    Array.isArray(x.index.positions) &&
    x.index.relOffsets.length === x.index.positions.length &&
    Number.isSafeInteger(x.index.intervalBytes)
  );
}

/** One index entry per this many bytes while scanning a listed fragment, before thinning. */
const REBUILD_INDEX_INTERVAL_BYTES = 4096;

/**
 * The repair path: lists the partition's fragments, keeps the newest contiguous chain, and reads each
 * to check its records and checksum and to rebuild its index. A fragment that fails ends the chain
 * there (older history is not served past a hole).
 */
async function rebuildFromListing(
  store: ObjectStore,
  topic: string,
  partition: number,
  logger: Logger,
): Promise<Manifest> {
  const prefix = partitionPrefix(topic, partition);
  const listed: { key: string; modifiedMs: number; baseOffset: number; endOffset: number; sum: string }[] =
    [];
  for await (const info of store.list(prefix)) {
    const parsed = parseFragmentKey(info.key, prefix);
    if (parsed !== null)
      listed.push({ key: info.key, modifiedMs: info.modifiedMs, ...parsed, sum: parsed.checksumHex });
  }
  // The chain that ends last, walked backwards: each fragment must end where the next begins.
  listed.sort((a, b) => b.endOffset - a.endOffset || a.baseOffset - b.baseOffset);
  const chain: typeof listed = [];
  for (const f of listed) {
    if (chain.length === 0 || f.endOffset === chain[chain.length - 1]!.baseOffset) chain.push(f);
  }
  const fragments: Fragment[] = [];
  for (const f of chain) {
    const bytes = await store.get(f.key);
    const relOffsets: number[] = [];
    const positions: number[] = [];
    let counted = 0;
    let sinceEntry = 0;
    const scan = scanStoredRecords(bytes, 0, bytes.length, (position, size) => {
      if (relOffsets.length === 0 || sinceEntry >= REBUILD_INDEX_INTERVAL_BYTES) {
        relOffsets.push(counted);
        positions.push(position);
        sinceEntry = 0;
      }
      sinceEntry += size;
      counted++;
    });
    const checksum = bytesChecksum(bytes);
    const good = scan.stop === 'end' && counted === f.endOffset - f.baseOffset && checksum.startsWith(f.sum);
    if (!good) {
      logger.error(
        `${topic}-${partition}: fragment ${f.key} fails its check (${counted} valid records, ${scan.stop}, checksum ${checksum.slice(0, 16)}); history before offset ${f.endOffset} is not restored`,
      );
      break;
    }
    fragments.unshift({
      key: f.key,
      baseOffset: f.baseOffset,
      endOffset: f.endOffset,
      sizeBytes: bytes.length,
      lastWriteMs: f.modifiedMs,
      persistedMs: f.modifiedMs,
      index: thinIndex(relOffsets, positions, bytes.length),
    });
  }
  return { format: MANIFEST_FORMAT, topic, partition, generation: 0, fragments };
}
