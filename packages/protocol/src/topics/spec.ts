/**
 * TopicSpec => name:string partitions:int32 labelCount:int32 [key:string value:string]*labelCount
 *              retentionBytes:int64 retentionMillis:int64 segmentBytes:int32 flags:int32
 *              replication:int16 storeUrl:string revision:int64
 *
 * One topic's spec, as APPLY sends it and LIST answers it. In LIST, `revision` is the spec store's
 * revision when the spec last changed; in an APPLY upsert it is the revision the change expects
 * (0: must not exist, -1: any, N: must be at N). Labels travel sorted by key.
 */
import { DecodeError, fieldError, readCount, type WireReader } from '../codec/reader.js';
import { stringBytes, type WireWriter } from '../codec/writer.js';
import {
  segmentBytesLimit,
  segmentBytesMin,
  storeUrlCharsMax,
  topicLabelsMax,
  topicPartitionsMax,
} from '../limits.js';
import { topicNameProblem } from '../topic-name.js';
import { labelKeyProblem, labelValueProblem, reservedLabelProblem } from './labels.js';

export interface TopicSpec {
  name: string;
  /** 1..10000; an existing topic's count may grow, never shrink. */
  partitions: number;
  /** `key=value` pairs for selectors (`team=payments`). */
  labels: Record<string, string>;
  /** Oldest segments go while a partition holds more (-1 unlimited; -2 in APPLY: the broker's default). */
  retentionBytes: number;
  /** Segments last written longer ago go (-1 unlimited; -2 in APPLY: the broker's default). */
  retentionMs: number;
  /** A segment's capacity, 9..2^31-1 (0 in APPLY: the broker's default). */
  segmentBytes: number;
  /** Bit set of `TopicFlag`; bits not defined are refused. */
  flags: number;
  /** Copies of each partition, primary included (0 in APPLY: the default, 1). */
  replication: number;
  /** Where the cluster keeps fragments (file:// or s3://); empty on one node. */
  storeUrl: string;
  revision: number;
}

export const TopicFlag = {
  /** PRODUCE is refused with TOPIC_READ_ONLY; FETCH still serves what is there. */
  READ_ONLY: 1,
} as const;

const flagsKnown = TopicFlag.READ_ONLY;

/** APPLY sentinels: the broker puts its configured value in the stored spec. */
export const RETENTION_DEFAULT = -2;
export const SEGMENT_BYTES_DEFAULT = 0;
export const REPLICATION_DEFAULT = 0;
/** Retention sentinel: keep everything. */
export const RETENTION_UNLIMITED = -1;

/** APPLY's expected revisions besides an exact N. */
export const Revision = {
  /** The topic must not exist. */
  MUST_NOT_EXIST: 0,
  /** Whatever the topic's revision is (or whether it exists at all). */
  ANY: -1,
} as const;

/** A spec with every field at its APPLY default: what a file naming only name and partitions means. */
export function topicSpecWithDefaults(
  fields: Pick<TopicSpec, 'name' | 'partitions'> & Partial<TopicSpec>,
): TopicSpec {
  return {
    labels: {},
    retentionBytes: RETENTION_DEFAULT,
    retentionMs: RETENTION_DEFAULT,
    segmentBytes: SEGMENT_BYTES_DEFAULT,
    flags: 0,
    replication: REPLICATION_DEFAULT,
    storeUrl: '',
    revision: Revision.ANY,
    ...fields,
  };
}

export function isReadOnly(spec: Pick<TopicSpec, 'flags'>): boolean {
  return (spec.flags & TopicFlag.READ_ONLY) !== 0;
}

function sortedLabels(labels: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function topicSpecBytes(spec: TopicSpec): number {
  let n = stringBytes(spec.name) + 4 + 4;
  for (const [k, v] of Object.entries(spec.labels)) n += stringBytes(k) + stringBytes(v);
  return n + 8 + 8 + 4 + 4 + 2 + stringBytes(spec.storeUrl) + 8;
}

export function writeTopicSpec(w: WireWriter, spec: TopicSpec): void {
  const labels = sortedLabels(spec.labels);
  w.string(spec.name).int32(spec.partitions).int32(labels.length);
  for (const [k, v] of labels) w.string(k).string(v);
  w.int64(spec.retentionBytes)
    .int64(spec.retentionMs)
    .int32(spec.segmentBytes)
    .int32(spec.flags)
    .int16(spec.replication)
    .string(spec.storeUrl)
    .int64(spec.revision);
}

/** Reads a spec's structure; its values are checked by `topicSpecProblem`, so a refusal can say why. */
export function readTopicSpec(reader: WireReader, field: string): TopicSpec {
  // Field names are plain constants on the way (a LIST answer holds thousands of specs); the path
  // is added only to a failure's message.
  try {
    return readSpecFields(reader);
  } catch (error) {
    if (error instanceof DecodeError) throw new DecodeError(`${field}.${error.message}`);
    throw error;
  }
}

function readSpecFields(reader: WireReader): TopicSpec {
  const name = reader.string('name');
  const partitions = reader.int32('partitions');
  // Each label takes at least two empty strings.
  const labelCount = readCount(reader, 'labelCount', 4);
  const labels: Record<string, string> = {};
  for (let i = 0; i < labelCount; i++) {
    const key = reader.string('labels.key');
    const value = reader.string('labels.value');
    if (Object.hasOwn(labels, key)) throw fieldError(`labels[${i}].key`, key, 'each key once');
    labels[key] = value;
  }
  return {
    name,
    partitions,
    labels,
    retentionBytes: reader.int64('retentionBytes'),
    retentionMs: reader.int64('retentionMillis'),
    segmentBytes: reader.int32('segmentBytes'),
    flags: reader.int32('flags'),
    replication: reader.int16('replication'),
    storeUrl: reader.string('storeUrl'),
    revision: reader.int64('revision'),
  };
}

export interface SpecRules {
  /** APPLY allows the default sentinels (-2, 0); a stored spec holds concrete values only. */
  defaultsAllowed: boolean;
}

/**
 * The first rule a spec breaks, as `field: value, expected ...`, or null. Every field is checked
 * here, where clients and the broker share it; the broker adds what depends on it (growth only,
 * replication and store on one node).
 */
export function topicSpecProblem(
  spec: TopicSpec,
  rules: SpecRules = { defaultsAllowed: true },
): string | null {
  const nameProblem = topicNameProblem(spec.name);
  if (nameProblem !== null) return `name: ${JSON.stringify(spec.name.slice(0, 60))} ${nameProblem}`;
  if (!Number.isInteger(spec.partitions) || spec.partitions < 1 || spec.partitions > topicPartitionsMax) {
    return `partitions: ${spec.partitions}, expected 1..${topicPartitionsMax}`;
  }
  const keys = Object.keys(spec.labels);
  if (keys.length > topicLabelsMax)
    return `labels: ${keys.length} of them, expected at most ${topicLabelsMax}`;
  for (const key of keys) {
    const keyProblem = labelKeyProblem(key) ?? reservedLabelProblem(key);
    if (keyProblem !== null) return `labels: key ${JSON.stringify(key.slice(0, 80))} ${keyProblem}`;
    const value = spec.labels[key]!;
    if (typeof value !== 'string') return `labels.${key}: ${String(value)}, expected a string`;
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== null) return `labels.${key}: ${JSON.stringify(value.slice(0, 80))} ${valueProblem}`;
  }
  const retentionMin = rules.defaultsAllowed ? RETENTION_DEFAULT : RETENTION_UNLIMITED;
  const retentionAllowed = rules.defaultsAllowed
    ? '>= -2 (-1 unlimited, -2 the broker default)'
    : '>= -1 (-1 unlimited)';
  if (!Number.isSafeInteger(spec.retentionBytes) || spec.retentionBytes < retentionMin) {
    return `retentionBytes: ${spec.retentionBytes}, expected an integer ${retentionAllowed}`;
  }
  if (!Number.isSafeInteger(spec.retentionMs) || spec.retentionMs < retentionMin) {
    return `retentionMillis: ${spec.retentionMs}, expected an integer ${retentionAllowed}`;
  }
  const segmentDefault = rules.defaultsAllowed && spec.segmentBytes === SEGMENT_BYTES_DEFAULT;
  if (
    !segmentDefault &&
    (!Number.isInteger(spec.segmentBytes) ||
      spec.segmentBytes < segmentBytesMin ||
      spec.segmentBytes > segmentBytesLimit)
  ) {
    return `segmentBytes: ${spec.segmentBytes}, expected ${segmentBytesMin}..${segmentBytesLimit}${rules.defaultsAllowed ? ' (0 the broker default)' : ''}`;
  }
  if (!Number.isInteger(spec.flags) || (spec.flags & ~flagsKnown) !== 0) {
    return `flags: ${spec.flags}, expected a combination of ${flagsKnown} (read-only)`;
  }
  const replicationDefault = rules.defaultsAllowed && spec.replication === REPLICATION_DEFAULT;
  if (
    !replicationDefault &&
    (!Number.isInteger(spec.replication) || spec.replication < 1 || spec.replication > 0x7fff)
  ) {
    return `replication: ${spec.replication}, expected 1..32767${rules.defaultsAllowed ? ' (0 the default, 1)' : ''}`;
  }
  if (spec.storeUrl.length > storeUrlCharsMax) {
    return `storeUrl: ${spec.storeUrl.length} characters, expected at most ${storeUrlCharsMax}`;
  }
  if (spec.storeUrl !== '' && !/^(file|s3):\/\/\S+$/.test(spec.storeUrl)) {
    return `storeUrl: ${JSON.stringify(spec.storeUrl.slice(0, 80))}, expected empty, file://... or s3://...`;
  }
  if (!Number.isSafeInteger(spec.revision) || spec.revision < -1) {
    return `revision: ${spec.revision}, expected -1 (any), 0 (must not exist) or the current revision`;
  }
  return null;
}
