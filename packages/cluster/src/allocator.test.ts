import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AllocatorInput, type AllocatorMember, allocatorLeader, planAllocation } from './allocator.js';

function members(...list: [id: string, zone: string][]): Map<string, AllocatorMember> {
  return new Map(list.map(([id, zone], i) => [id, { id, zone, createRevision: 10 + i, leaseId: `L${id}` }]));
}

function input(over: Partial<AllocatorInput>): AllocatorInput {
  return { members: new Map(), specs: new Map(), owners: new Map(), assigned: new Map(), ...over };
}

/** Applies a plan to the input, as etcd would after the leader's transactions. */
function applied(state: AllocatorInput): AllocatorInput {
  const owners = new Map(state.owners);
  const assigned = new Map([...state.assigned].map(([k, v]) => [k, [...v]]));
  for (const op of planAllocation(state)) {
    if (op.op === 'dropTopic') continue;
    const key = `${op.topic}/${op.partition}`;
    if (op.op === 'own') owners.set(key, op.member);
    if (op.op === 'own' || op.op === 'assign') assigned.set(key, [...(assigned.get(key) ?? []), op.member]);
    if (op.op === 'unassign')
      assigned.set(
        key,
        (assigned.get(key) ?? []).filter((m) => m !== op.member),
      );
  }
  return { ...state, owners, assigned };
}

describe('allocator', () => {
  it('the oldest member leads; a tie goes to the lower id', () => {
    const m = members(['b2', 'a'], ['b1', 'b']);
    assert.equal(allocatorLeader(m), 'b2');
    m.set('b0', { id: 'b0', zone: 'c', createRevision: 10, leaseId: 'x' });
    assert.equal(allocatorLeader(m), 'b0');
    assert.equal(allocatorLeader(new Map()), undefined);
  });

  it('spreads one topic across zones and balances counts across members', () => {
    const state = applied(
      input({
        members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c'], ['b4', 'a']),
        specs: new Map([['t', { partitions: 8 }]]),
      }),
    );
    const perZone = new Map<string, number>();
    const perMember = new Map<string, number>();
    for (const owner of state.owners.values()) {
      const zone = state.members.get(owner)!.zone;
      perZone.set(zone, (perZone.get(zone) ?? 0) + 1);
      perMember.set(owner, (perMember.get(owner) ?? 0) + 1);
    }
    assert.equal(state.owners.size, 8);
    // 8 partitions over 3 zones: 3, 3, 2, whatever the number of members in each.
    assert.deepEqual([...perZone.values()].sort(), [2, 3, 3]);
    // Zone a's share is split between its two members.
    assert.ok(Math.abs(perMember.get('b1')! - perMember.get('b4')!) <= 1, JSON.stringify([...perMember]));
    assert.deepEqual(planAllocation(state), [], 'a settled state plans nothing');
  });

  it('never moves an owned partition: a new member gets only new partitions', () => {
    const before = applied(
      input({ members: members(['b1', 'a'], ['b2', 'b']), specs: new Map([['t', { partitions: 4 }]]) }),
    );
    const joined = { ...before, members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c']) };
    assert.deepEqual(planAllocation(joined), [], 'the new member took nothing that was owned');
    const grown = applied({ ...joined, specs: new Map([['t', { partitions: 5 }]]) });
    assert.equal(grown.owners.get('t/4'), 'b3', 'the new partition went to the new, empty zone');
  });

  it("a dead owner's partitions stay its own (no primary) and are assigned again when it returns", () => {
    const settled = applied(
      input({ members: members(['b1', 'a'], ['b2', 'b']), specs: new Map([['t', { partitions: 2 }]]) }),
    );
    const deadOwner = settled.owners.get('t/0')!;
    const survivors = new Map([...settled.members].filter(([id]) => id !== deadOwner));
    // Its assignment went with its lease.
    const assigned = new Map([...settled.assigned].filter(([, holders]) => !holders.includes(deadOwner)));
    assert.deepEqual(planAllocation({ ...settled, members: survivors, assigned }), []);
    const back = members(['b1', 'a'], ['b2', 'b']);
    back.get(deadOwner)!.leaseId = 'new-lease';
    assert.deepEqual(planAllocation({ ...settled, members: back, assigned }), [
      { op: 'assign', topic: 't', partition: 0, member: deadOwner, leaseId: 'new-lease' },
    ]);
  });

  it("drops a deleted topic's owners; removes an assignment that is not the owner's", () => {
    const ops = planAllocation(
      input({
        members: members(['b1', 'a'], ['b2', 'b']),
        specs: new Map([['kept', { partitions: 1 }]]),
        owners: new Map([
          ['gone/0', 'b1'],
          ['kept/0', 'b2'],
        ]),
        assigned: new Map([['kept/0', ['b1', 'b2']]]),
      }),
    );
    assert.deepEqual(ops, [
      { op: 'dropTopic', topic: 'gone' },
      { op: 'unassign', topic: 'kept', partition: 0, member: 'b1' },
    ]);
  });

  it('assigns nothing while no member is live', () => {
    assert.deepEqual(planAllocation(input({ specs: new Map([['t', { partitions: 3 }]]) })), []);
  });
});
