/**
 * The cluster's keys in etcd, all under `/<cluster>/`:
 *
 *   /<cluster>/members/<member>                            member value, under the member's lease
 *   /<cluster>/specs/<topic>                               topic spec value (revision = key's mod revision)
 *   /<cluster>/assignments/<topic>/<partition>/<member>    assignment value, under the assignee's lease
 *   /<cluster>/owners/<topic>/<partition>                  owner value: the member whose data it is (no lease)
 *   /<cluster>/purges/<topic>                              `{}`, put by the APPLY that deletes the topic purging
 *                                                          its store (its mod revision is the delete's)
 *   /<cluster>/users/<base64url of the name>               a SCRAM user's salted keys (the broker reads them)
 *
 * Names are checked before they become keys, so none holds a `/` and every key parses back into
 * exactly one (kind, names) triple.
 */
import { topicNameProblem, topicPartitionsMax } from '@booblik/protocol';

/** Cluster names and member ids: they become path segments, so no `/` and nothing to escape. */
const segmentPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Long enough for a host name or a UUID, short enough to keep keys small. */
export const NAME_CHARS_MAX = 64;

function segmentProblem(what: string, value: string): string | null {
  if (value.length === 0 || value.length > NAME_CHARS_MAX) {
    return `${what}: ${JSON.stringify(value.slice(0, 80))} has ${value.length} characters, expected 1..${NAME_CHARS_MAX}`;
  }
  if (!segmentPattern.test(value)) {
    return `${what}: ${JSON.stringify(value)}, expected a letter or digit first, then letters, digits, ".", "_" or "-"`;
  }
  return null;
}

export function clusterNameProblem(name: string): string | null {
  return segmentProblem('cluster name', name);
}

export function memberIdProblem(id: string): string | null {
  return segmentProblem('member id', id);
}

export type ParsedKey =
  | { kind: 'member'; member: string }
  | { kind: 'spec'; topic: string }
  | { kind: 'assignment'; topic: string; partition: number; member: string }
  | { kind: 'owner'; topic: string; partition: number }
  | { kind: 'purge'; topic: string }
  | { kind: 'user'; name: string };

/** Every key of one cluster: building them, and reading one back. */
export class Keyspace {
  /** `/<cluster>/`: every key of the cluster starts with it (the watched copy's prefix). */
  readonly prefix: string;
  readonly membersPrefix: string;
  readonly specsPrefix: string;
  readonly assignmentsPrefix: string;
  readonly ownersPrefix: string;
  readonly purgesPrefix: string;
  readonly usersPrefix: string;

  constructor(readonly cluster: string) {
    const problem = clusterNameProblem(cluster);
    if (problem !== null) throw new RangeError(problem);
    this.prefix = `/${cluster}/`;
    this.membersPrefix = `${this.prefix}members/`;
    this.specsPrefix = `${this.prefix}specs/`;
    this.assignmentsPrefix = `${this.prefix}assignments/`;
    this.ownersPrefix = `${this.prefix}owners/`;
    this.purgesPrefix = `${this.prefix}purges/`;
    this.usersPrefix = `${this.prefix}users/`;
  }

  /** A user's key: the name encoded, since a user name may hold any character but a control one. */
  userKey(name: string): string {
    if (name.length === 0) throw new RangeError('user name: empty');
    return this.usersPrefix + Buffer.from(name, 'utf8').toString('base64url');
  }

  memberKey(member: string): string {
    const problem = memberIdProblem(member);
    if (problem !== null) throw new RangeError(problem);
    return this.membersPrefix + member;
  }

  specKey(topic: string): string {
    const problem = topicNameProblem(topic);
    if (problem !== null) throw new RangeError(`topic: ${JSON.stringify(topic.slice(0, 60))} ${problem}`);
    return this.specsPrefix + topic;
  }

  /** Every assignment of a topic (a deleted topic's are removed with this prefix). */
  topicAssignmentsPrefix(topic: string): string {
    return `${this.assignmentsPrefix}${this.specKey(topic).slice(this.specsPrefix.length)}/`;
  }

  assignmentKey(topic: string, partition: number, member: string): string {
    checkPartition(partition);
    return `${this.topicAssignmentsPrefix(topic)}${partition}/${this.memberKey(member).slice(this.membersPrefix.length)}`;
  }

  /** Every owner record of a topic (removed with the topic). */
  topicOwnersPrefix(topic: string): string {
    return `${this.ownersPrefix}${this.specKey(topic).slice(this.specsPrefix.length)}/`;
  }

  ownerKey(topic: string, partition: number): string {
    checkPartition(partition);
    return `${this.topicOwnersPrefix(topic)}${partition}`;
  }

  /** Marks the deletion of a topic, in the same transaction, as one that purges its store. */
  purgeKey(topic: string): string {
    return this.purgesPrefix + this.specKey(topic).slice(this.specsPrefix.length);
  }

  /** What a key under the prefix names, or null for a key this version does not know (left alone). */
  parse(key: string): ParsedKey | null {
    if (!key.startsWith(this.prefix)) return null;
    if (key.startsWith(this.membersPrefix)) {
      const member = key.slice(this.membersPrefix.length);
      return memberIdProblem(member) === null ? { kind: 'member', member } : null;
    }
    if (key.startsWith(this.specsPrefix)) {
      const topic = key.slice(this.specsPrefix.length);
      return topicNameProblem(topic) === null ? { kind: 'spec', topic } : null;
    }
    if (key.startsWith(this.assignmentsPrefix)) {
      const parts = key.slice(this.assignmentsPrefix.length).split('/');
      if (parts.length !== 3) return null;
      const [topic, partitionText, member] = parts as [string, string, string];
      const partition = parsePartition(partitionText);
      if (topicNameProblem(topic) !== null || memberIdProblem(member) !== null) return null;
      if (partition < 0) return null;
      return { kind: 'assignment', topic, partition, member };
    }
    if (key.startsWith(this.ownersPrefix)) {
      const parts = key.slice(this.ownersPrefix.length).split('/');
      if (parts.length !== 2) return null;
      const [topic, partitionText] = parts as [string, string];
      const partition = parsePartition(partitionText);
      if (topicNameProblem(topic) !== null || partition < 0) return null;
      return { kind: 'owner', topic, partition };
    }
    if (key.startsWith(this.usersPrefix)) {
      const encoded = key.slice(this.usersPrefix.length);
      if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
      const name = Buffer.from(encoded, 'base64url').toString('utf8');
      // Only the one spelling of each name: a key that does not encode back is not ours.
      return Buffer.from(name, 'utf8').toString('base64url') === encoded ? { kind: 'user', name } : null;
    }
    if (key.startsWith(this.purgesPrefix)) {
      const topic = key.slice(this.purgesPrefix.length);
      return topicNameProblem(topic) === null ? { kind: 'purge', topic } : null;
    }
    return null;
  }
}

function checkPartition(partition: number): void {
  if (!Number.isInteger(partition) || partition < 0 || partition >= topicPartitionsMax) {
    throw new RangeError(`partition: ${partition}, expected 0..${topicPartitionsMax - 1}`);
  }
}

/** A partition id as written in a key (no sign, no leading zero), or -1. */
function parsePartition(text: string): number {
  const partition = /^(0|[1-9][0-9]{0,8})$/.test(text) ? Number(text) : -1;
  return partition < topicPartitionsMax ? partition : -1;
}
