/**
 * The values stored under the cluster's keys, as JSON. Each decoder takes bytes from etcd (the
 * world's input: another version or a hand edit may have written them) and returns the value or a
 * problem that says which field is wrong; it never throws.
 */
import { type TopicSpec, topicSpecProblem } from '@booblik/protocol';
import { memberIdProblem } from './keyspace.js';

/** What a member announces under its lease. */
export interface MemberInfo {
  id: string;
  /** Failure domain (rack, availability zone); the allocator spreads a topic's partitions across zones. */
  zone: string;
  /** `host:port` that clients and the other brokers dial. */
  address: string;
}

/** A partition's assignment to a member. Slot 0 is the primary; replicas (a later step) take 1, 2, ... */
export interface AssignmentValue {
  slot: number;
}

export type Decoded<T> = { value: T } | { problem: string };

const zonePattern = /^[A-Za-z0-9._-]{0,64}$/;
const addressPattern = /^\S+:\d{1,5}$/;

export function memberInfoProblem(info: MemberInfo): string | null {
  const idProblem = memberIdProblem(info.id);
  if (idProblem !== null) return idProblem;
  if (typeof info.zone !== 'string' || !zonePattern.test(info.zone)) {
    return `zone: ${JSON.stringify(info.zone)}, expected up to 64 letters, digits, ".", "_" or "-"`;
  }
  if (typeof info.address !== 'string' || !addressPattern.test(info.address)) {
    return `address: ${JSON.stringify(info.address)}, expected host:port`;
  }
  const port = Number(info.address.slice(info.address.lastIndexOf(':') + 1));
  if (port < 1 || port > 65535) return `address: ${JSON.stringify(info.address)}, expected a port 1..65535`;
  return null;
}

export function encodeMember(info: MemberInfo): string {
  return JSON.stringify({ id: info.id, zone: info.zone, address: info.address });
}

export function decodeMember(bytes: Buffer): Decoded<MemberInfo> {
  const parsed = parseObject(bytes);
  if ('problem' in parsed) return parsed;
  const info = parsed.value as unknown as MemberInfo;
  const problem = memberInfoProblem(info);
  return problem === null ? { value: { id: info.id, zone: info.zone, address: info.address } } : { problem };
}

/** A spec as stored: every field but `revision`, which is the key's mod revision in etcd. */
export function encodeSpec(spec: TopicSpec): string {
  const { revision: _revision, ...stored } = spec;
  return JSON.stringify(stored);
}

export function decodeSpec(bytes: Buffer, modRevision: number): Decoded<TopicSpec> {
  const parsed = parseObject(bytes);
  if ('problem' in parsed) return parsed;
  const o = parsed.value;
  if (typeof o['labels'] !== 'object' || o['labels'] === null || Array.isArray(o['labels'])) {
    return { problem: `labels: ${JSON.stringify(o['labels'])}, expected an object` };
  }
  for (const field of ['name', 'storeUrl'] as const) {
    if (typeof o[field] !== 'string')
      return { problem: `${field}: ${JSON.stringify(o[field])}, expected a string` };
  }
  const spec: TopicSpec = {
    name: o['name'] as string,
    partitions: o['partitions'] as number,
    labels: { ...(o['labels'] as Record<string, string>) },
    retentionBytes: o['retentionBytes'] as number,
    retentionMs: o['retentionMs'] as number,
    segmentBytes: o['segmentBytes'] as number,
    flags: o['flags'] as number,
    replication: o['replication'] as number,
    storeUrl: o['storeUrl'] as string,
    revision: modRevision,
  };
  const problem = topicSpecProblem(spec);
  return problem === null ? { value: spec } : { problem };
}

export function encodeAssignment(value: AssignmentValue): string {
  return JSON.stringify({ slot: value.slot });
}

export function decodeAssignment(bytes: Buffer): Decoded<AssignmentValue> {
  const parsed = parseObject(bytes);
  if ('problem' in parsed) return parsed;
  const slot = parsed.value['slot'];
  if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0 || slot > 0x7fff) {
    return { problem: `slot: ${JSON.stringify(slot)}, expected 0..32767` };
  }
  return { value: { slot } };
}

/**
 * Whose data a partition is, and who holds copies of it. It outlives every member's lease: a broker
 * that dies keeps its place, so nobody is handed a partition it has no records of.
 *
 * - `member` is the primary: the one broker that takes writes, in `epoch`.
 * - `replicas` are every broker holding a copy, the primary included (1 without replication).
 * - `isr` are the replicas known to hold everything acknowledged: only the primary shrinks or grows
 *   it, and only one of them may be promoted when the primary's lease expires (with `epoch` + 1).
 *
 * A value of an older version (`{member}` alone) reads as one replica, in sync, epoch 0.
 */
export interface OwnerValue {
  member: string;
  replicas: readonly string[];
  isr: readonly string[];
  epoch: number;
}

export const REPLICAS_MAX = 5;

export function encodeOwner(value: OwnerValue): string {
  return JSON.stringify({
    member: value.member,
    replicas: value.replicas,
    isr: value.isr,
    epoch: value.epoch,
  });
}

export function decodeOwner(bytes: Buffer): Decoded<OwnerValue> {
  const parsed = parseObject(bytes);
  if ('problem' in parsed) return parsed;
  const o = parsed.value;
  const member = o['member'];
  if (typeof member !== 'string')
    return { problem: `member: ${JSON.stringify(member)}, expected a member id` };
  const problem = memberIdProblem(member);
  if (problem !== null) return { problem };
  const replicas = o['replicas'] ?? [member];
  const isr = o['isr'] ?? [member];
  const epoch = o['epoch'] ?? 0;
  for (const [field, list] of [
    ['replicas', replicas],
    ['isr', isr],
  ] as const) {
    if (!Array.isArray(list) || list.length < 1 || list.length > REPLICAS_MAX)
      return { problem: `${field}: ${JSON.stringify(list)}, expected 1..${REPLICAS_MAX} member ids` };
    for (const id of list) {
      if (typeof id !== 'string' || memberIdProblem(id) !== null)
        return { problem: `${field}: ${JSON.stringify(id)} is not a member id` };
    }
    if (new Set(list).size !== list.length)
      return { problem: `${field}: ${JSON.stringify(list)} names a member twice` };
  }
  const replicaIds = replicas as string[];
  const isrIds = isr as string[];
  if (!replicaIds.includes(member))
    return { problem: `replicas: ${JSON.stringify(replicaIds)} lacks the primary ${member}` };
  if (!isrIds.includes(member))
    return { problem: `isr: ${JSON.stringify(isrIds)} lacks the primary ${member}` };
  for (const id of isrIds) {
    if (!replicaIds.includes(id)) return { problem: `isr: ${id} is not one of the replicas` };
  }
  if (typeof epoch !== 'number' || !Number.isInteger(epoch) || epoch < 0 || epoch > 0x7fffffff)
    return { problem: `epoch: ${JSON.stringify(epoch)}, expected 0..2147483647` };
  return { value: { member, replicas: replicaIds, isr: isrIds, epoch } };
}

function parseObject(bytes: Buffer): Decoded<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return { problem: `not JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: `${JSON.stringify(value)?.slice(0, 80)}, expected a JSON object` };
  }
  return { value: value as Record<string, unknown> };
}
