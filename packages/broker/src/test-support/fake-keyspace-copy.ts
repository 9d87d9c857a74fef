import { EventEmitter } from 'node:events';
import type { AssignmentEntry, MemberEntry, OwnerEntry } from '@booblik/cluster';
import { type TopicSpec, topicSpecWithDefaults } from '@booblik/protocol';
import type { RoutingCopy } from '../cluster/cluster-routing.js';

/**
 * The watched keyspace copy as the routes read it, set by the test: each change emits 'change', as
 * a watch event applied to the real copy does.
 */
export class FakeKeyspaceCopy extends EventEmitter implements RoutingCopy {
  readonly members = new Map<string, MemberEntry>();
  readonly specs = new Map<string, TopicSpec>();
  private readonly owners = new Map<string, OwnerEntry>();
  private readonly assignments = new Map<string, AssignmentEntry[]>();

  ownerOf(topic: string, partition: number): OwnerEntry | undefined {
    return this.owners.get(`${topic}/${partition}`);
  }

  assignmentsOf(topic: string, partition: number): readonly AssignmentEntry[] {
    return this.assignments.get(`${topic}/${partition}`) ?? [];
  }

  /** A member that holds its lease now. */
  addMember(id: string, address = `${id}:9092`, zone = ''): this {
    this.members.set(id, { id, address, zone, createRevision: 1, leaseId: '1' });
    return this.changed();
  }

  /** Its lease lapsed: its key is gone. */
  removeMember(id: string): this {
    this.members.delete(id);
    return this.changed();
  }

  addTopic(name: string, partitions: number): this {
    this.specs.set(name, topicSpecWithDefaults({ name, partitions }));
    return this.changed();
  }

  /**
   * The partition's owner record (`replicas` and `isr` default to the primary alone) and its
   * primary's assignment (slot 0), unless `assigned` is false (the assignment went with a lease).
   */
  own(
    topic: string,
    partition: number,
    member: string,
    o: { replicas?: string[]; isr?: string[]; epoch?: number; assigned?: boolean } = {},
  ): this {
    const replicas = o.replicas ?? [member];
    const key = `${topic}/${partition}`;
    this.owners.set(key, {
      member,
      replicas,
      isr: o.isr ?? replicas,
      epoch: o.epoch ?? 1,
      createRevision: 1,
      modRevision: 1,
    });
    const assigned = o.assigned === false ? [] : [{ topic, partition, member, slot: 0, createRevision: 1 }];
    this.assignments.set(key, assigned);
    return this.changed();
  }

  private changed(): this {
    this.emit('change', 0);
    return this;
  }
}
