/**
 * Every configuration key the broker reads: its default, what it allows, and why. The `booblik.*`
 * keys of the original broker keep their names, so its configuration files keep working.
 */
import {
  DEFAULT_INDEX_INTERVAL_BYTES,
  DEFAULT_SEGMENT_BYTES_MAX,
  DEFAULT_TAIL_CACHE_BYTES,
  DEFAULT_WRITER_QUEUE_BYTES_MAX,
} from '@booblik/log';
import { topicNameProblem } from '@booblik/protocol';
import { retentionCheckMsDefault, retentionMsDefault } from '../limits.js';
import type { KeySpec, TopicSpec } from './key-spec.js';
import { authKeys, etcdSecurityKeys, tlsKeys } from './security-keys.js';

export type { BrokerConfig, TlsClientAuth, TlsMode, TopicSpec } from './key-spec.js';

const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (raw: string): number | undefined => {
    if (!/^-?\d+$/.test(raw.trim())) return undefined;
    const n = Number(raw.trim());
    return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
  };

const nonEmpty = (raw: string): string | undefined => (raw.trim().length > 0 ? raw.trim() : undefined);

/** Letters, digits, `.`, `_`, `-`: the value becomes an etcd key segment. */
const segment =
  (allowEmpty: boolean) =>
  (raw: string): string | undefined => {
    const v = raw.trim();
    if (v === '') return allowEmpty ? v : undefined;
    return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(v) ? v : undefined;
  };

/** `http://host:port[,http://host:port...]`, or empty. */
function parseEndpoints(raw: string): string[] | undefined {
  const v = raw.trim();
  if (v === '') return [];
  const endpoints = v.split(',').map((e) => e.trim());
  return endpoints.every((e) => /^https?:\/\/[^\s/,]+:\d{1,5}$/.test(e)) ? endpoints : undefined;
}

const hostPort = (raw: string): string | undefined => {
  const v = raw.trim();
  if (v === '') return v;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):(\d{1,5})$/.exec(v);
  return match && Number(match[2]) >= 1 && Number(match[2]) <= 65535 ? v : undefined;
};

/**
 * `advertised=dial[,advertised=dial...]`, each side host:port, no advertised address twice; empty
 * for none.
 */
function parsePeerDial(raw: string): Map<string, string> | undefined {
  const pairs = new Map<string, string>();
  if (raw.trim() === '') return pairs;
  for (const part of raw.split(',')) {
    const sides = part.split('=');
    if (sides.length !== 2) return undefined;
    const advertised = hostPort(sides[0]!);
    const dial = hostPort(sides[1]!);
    if (!advertised || !dial || pairs.has(advertised)) return undefined;
    pairs.set(advertised, dial);
  }
  return pairs;
}

/** `name:count,name:count` — each name valid on the wire, each count 1..10000, no name twice. */
export function parseTopics(raw: string): TopicSpec[] | undefined {
  const specs: TopicSpec[] = [];
  for (const part of raw.split(',')) {
    const match = /^\s*([^:\s]+)\s*:\s*(\d+)\s*$/.exec(part);
    if (!match) return undefined;
    const name = match[1]!;
    const partitions = Number(match[2]);
    if (topicNameProblem(name) !== null || partitions < 1 || partitions > 10_000) return undefined;
    if (specs.some((s) => s.name === name)) return undefined;
    specs.push({ name, partitions });
  }
  return specs;
}

const MIB = 1024 * 1024;

export const configKeys = [
  {
    key: 'booblik.data.dir',
    field: 'dataDir',
    default: 'data',
    allowed: 'a directory path',
    description: 'where partitions live, one directory per <topic>-<partition>',
    parse: nonEmpty,
  } satisfies KeySpec<'dataDir'>,
  {
    key: 'booblik.port',
    field: 'port',
    default: '9092',
    allowed: 'an integer 0..65535 (0 picks a free port)',
    description: 'the protocol port',
    parse: integer(0, 65535),
  } satisfies KeySpec<'port'>,
  {
    key: 'booblik.bind.address',
    field: 'bindAddress',
    default: '127.0.0.1',
    allowed: 'an IP address or host name',
    description: 'loopback by default: with booblik.auth off, anyone who reaches the port may do anything',
    parse: nonEmpty,
  } satisfies KeySpec<'bindAddress'>,
  ...authKeys,
  {
    key: 'booblik.topics',
    field: 'topics',
    default: 'default:1',
    allowed: 'name:partitions[,name:partitions...] with valid topic names and 1..10000 partitions each',
    description: 'the topics served and their partition counts',
    parse: parseTopics,
  } satisfies KeySpec<'topics'>,
  {
    key: 'booblik.segment.capacity.bytes',
    field: 'segmentBytesMax',
    default: String(DEFAULT_SEGMENT_BYTES_MAX),
    allowed: 'an integer 9..2147483647',
    description: 'a new segment starts when the active one would pass this size',
    parse: integer(9, 2 ** 31 - 1),
  } satisfies KeySpec<'segmentBytesMax'>,
  {
    key: 'booblik.index.interval.bytes',
    field: 'indexIntervalBytes',
    default: String(DEFAULT_INDEX_INTERVAL_BYTES),
    allowed: 'an integer 1..2147483647',
    description: 'one sparse-index entry per this many bytes',
    parse: integer(1, 2 ** 31 - 1),
  } satisfies KeySpec<'indexIntervalBytes'>,
  {
    key: 'booblik.flush.every.records',
    field: 'flushEveryRecords',
    default: '0',
    allowed: 'an integer >= 0 (0: never by count)',
    description: 'fdatasync after this many records, bounding what WRITTEN can lose in a machine crash',
    parse: integer(0),
  } satisfies KeySpec<'flushEveryRecords'>,
  {
    key: 'booblik.flush.every.millis',
    field: 'flushEveryMs',
    default: '0',
    allowed: 'an integer >= 0 (0: never by time)',
    description: 'fdatasync this often when anything was written',
    parse: integer(0),
  } satisfies KeySpec<'flushEveryMs'>,
  {
    key: 'booblik.retention.bytes',
    field: 'retentionBytes',
    default: '-1',
    allowed: 'an integer >= -1 (-1: unlimited)',
    description: 'remove oldest segments while a partition holds more than this',
    parse: integer(-1),
  } satisfies KeySpec<'retentionBytes'>,
  {
    key: 'booblik.retention.millis',
    field: 'retentionMs',
    default: String(retentionMsDefault),
    allowed: 'an integer >= -1 (-1: unlimited)',
    description: 'remove segments last written longer ago than this (default 7 days)',
    parse: integer(-1),
  } satisfies KeySpec<'retentionMs'>,
  {
    key: 'booblik.retention.check.millis',
    field: 'retentionCheckMs',
    default: String(retentionCheckMsDefault),
    allowed: 'an integer >= 1',
    description: 'how often retention runs',
    parse: integer(1),
  } satisfies KeySpec<'retentionCheckMs'>,
  {
    key: 'booblik.metrics.interval.millis',
    field: 'metricsIntervalMs',
    default: '30000',
    allowed: 'an integer >= 0 (0: no periodic summary)',
    description: 'how often the one-line metrics summary is logged',
    parse: integer(0),
  } satisfies KeySpec<'metricsIntervalMs'>,
  {
    key: 'booblik.http.port',
    field: 'httpPort',
    default: '9093',
    allowed: 'an integer -1..65535 (0 picks a free port, -1 turns HTTP off)',
    description: 'Prometheus /metrics, /healthz and /readyz',
    parse: integer(-1, 65535),
  } satisfies KeySpec<'httpPort'>,
  {
    key: 'booblik.max.connections',
    field: 'maxConnections',
    default: '10000',
    allowed: 'an integer >= 1',
    description: 'connections beyond this are closed at once and counted',
    parse: integer(1),
  } satisfies KeySpec<'maxConnections'>,
  {
    key: 'booblik.max.inflight.requests',
    field: 'maxInflightRequests',
    default: '1024',
    allowed: 'an integer >= 1',
    description: 'requests one connection may have unanswered before the broker stops reading it',
    parse: integer(1),
  } satisfies KeySpec<'maxInflightRequests'>,
  {
    key: 'booblik.tail.cache.bytes',
    field: 'tailCacheBytes',
    default: String(DEFAULT_TAIL_CACHE_BYTES),
    allowed: 'an integer >= 0',
    description: 'newest bytes per partition kept in memory for consumers that keep up',
    parse: integer(0),
  } satisfies KeySpec<'tailCacheBytes'>,
  {
    key: 'booblik.writer.queue.bytes',
    field: 'writerQueueBytes',
    default: String(DEFAULT_WRITER_QUEUE_BYTES_MAX),
    allowed: 'an integer >= 1',
    description: 'bytes queued per partition before producers wait',
    parse: integer(1),
  } satisfies KeySpec<'writerQueueBytes'>,
  {
    key: 'booblik.cluster.etcd',
    field: 'clusterEtcd',
    default: '',
    allowed: 'empty, or etcd endpoints http://host:port separated by commas',
    description: 'join the cluster coordinated by this etcd; empty runs one node with no etcd',
    parse: parseEndpoints,
  } satisfies KeySpec<'clusterEtcd'>,
  ...etcdSecurityKeys,
  {
    key: 'booblik.cluster.name',
    field: 'clusterName',
    default: 'booblik',
    allowed: 'letters, digits, ".", "_", "-" (up to 64, a letter or digit first)',
    description: "the cluster's etcd key prefix: several clusters may share one etcd",
    parse: segment(false),
  } satisfies KeySpec<'clusterName'>,
  {
    key: 'booblik.cluster.lease.millis',
    field: 'clusterLeaseMs',
    default: '5000',
    allowed: 'whole seconds in milliseconds, 2000..600000',
    description:
      "the member lease: a dead broker's partitions show no primary within this; a live one must renew within it through GC pauses and load",
    parse: (raw) => {
      const n = integer(2000, 600_000)(raw);
      return n !== undefined && n % 1000 === 0 ? n : undefined;
    },
  } satisfies KeySpec<'clusterLeaseMs'>,
  {
    key: 'booblik.default.replication',
    field: 'defaultReplication',
    default: '3',
    allowed: 'an integer 1..5',
    description:
      'copies of each partition of a topic whose spec leaves replication to the cluster (capped at the live brokers when the partition is created)',
    parse: integer(1, 5),
  } satisfies KeySpec<'defaultReplication'>,
  {
    key: 'booblik.replica.lag.max.millis',
    field: 'replicaLagMaxMs',
    default: '10000',
    allowed: 'an integer 100..600000',
    description:
      'a replica not caught up with its primary for this long leaves the in-sync set, so writes go on without it; long enough for an fdatasync of much unsynced data (seconds), while a dead replica leaves sooner, when its lease expires',
    parse: integer(100, 600_000),
  } satisfies KeySpec<'replicaLagMaxMs'>,
  {
    key: 'booblik.broker.id',
    field: 'brokerId',
    default: '',
    allowed: 'empty, or letters, digits, ".", "_", "-" (up to 64, a letter or digit first)',
    description:
      'this broker in the cluster; kept in the data directory after the first start (empty: the kept one, or a new one)',
    parse: segment(true),
  } satisfies KeySpec<'brokerId'>,
  {
    key: 'booblik.broker.zone',
    field: 'brokerZone',
    default: '',
    allowed: 'empty, or letters, digits, ".", "_", "-" (up to 64)',
    description: "the failure domain (rack, availability zone): a topic's partitions are spread across zones",
    parse: segment(true),
  } satisfies KeySpec<'brokerZone'>,
  {
    key: 'booblik.advertised.address',
    field: 'advertisedAddress',
    default: '',
    allowed: 'empty, or host:port',
    description: 'the address clients and other brokers dial; empty: the bind address and the protocol port',
    parse: hostPort,
  } satisfies KeySpec<'advertisedAddress'>,
  {
    key: 'booblik.cluster.peer.dial',
    field: 'clusterPeerDial',
    default: '',
    allowed: 'empty, or advertised=dial pairs of host:port separated by commas, each advertised address once',
    description:
      "dial another broker at an address other than the one it advertises (a NAT between brokers, a test's fault proxy)",
    parse: parsePeerDial,
  } satisfies KeySpec<'clusterPeerDial'>,
  {
    key: 'booblik.local.retention.bytes',
    field: 'localRetentionBytes',
    default: '-1',
    allowed: 'an integer >= -1 (-1: unlimited)',
    description:
      'for topics with a store: drop local copies of persisted segments while a partition holds more',
    parse: integer(-1),
  } satisfies KeySpec<'localRetentionBytes'>,
  {
    key: 'booblik.local.retention.millis',
    field: 'localRetentionMs',
    default: '-1',
    allowed: 'an integer >= -1 (-1: unlimited)',
    description: 'for topics with a store: drop local copies of persisted segments last written longer ago',
    parse: integer(-1),
  } satisfies KeySpec<'localRetentionMs'>,
  {
    key: 'booblik.store.cache.bytes',
    field: 'storeCacheBytes',
    default: String(64 * MIB),
    allowed: 'an integer >= 0',
    description:
      'bytes read from stores kept in memory, shared by every partition (64 MiB: 8 blocks of 8 MiB)',
    parse: integer(0),
  } satisfies KeySpec<'storeCacheBytes'>,
  ...tlsKeys,
] as const;

export type ConfigKey = (typeof configKeys)[number]['key'];

/** `booblik.data.dir` -> `BOOBLIK_DATA_DIR`. */
export function envNameOf(key: string): string {
  return key.toUpperCase().replace(/\./g, '_');
}
