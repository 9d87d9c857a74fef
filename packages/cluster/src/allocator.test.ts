import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AllocatorInput,
  type AllocatorMember,
  type AllocatorOwner,
  allocatorLeader,
  planAllocation,
} from './allocator.js';

function members(...list: [id: string, zone: string][]): Map<string, AllocatorMember> {
  return new Map(list.map(([id, zone], i) => [id, { id, zone, createRevision: 10 + i, leaseId: `L${id}` }]));
}

function specs(...list: [topic: string, partitions: number, replication?: number][]) {
  return new Map(
    list.map(([t, partitions, replication]) => [t, { partitions, replication: replication ?? 1 }]),
  );
}

function single(member: string): AllocatorOwner {
  return { member, replicas: [member], isr: [member], epoch: 1, modRevision: 5 };
}

function input(over: Partial<AllocatorInput>): AllocatorInput {
  return { members: new Map(), specs: new Map(), owners: new Map(), assigned: new Map(), ...over };
}

/** Applies a plan to the input, as etcd would after the leader's transactions. */
function applied(state: AllocatorInput): AllocatorInput {
  const owners = new Map(state.owners);
  const assigned = new Map([...state.assigned].map(([k, v]) => [k, new Map(v)]));
  const slotsOf = (key: string) => {
    const slots = assigned.get(key) ?? new Map<string, number>();
    assigned.set(key, slots);
    return slots;
  };
  for (const op of planAllocation(state)) {
    if (op.op === 'dropTopic') continue;
    const key = `${op.topic}/${op.partition}`;
    if (op.op === 'own') {
      owners.set(key, {
        member: op.replicas[0]!,
        replicas: op.replicas,
        isr: op.replicas,
        epoch: 1,
        modRevision: 5,
      });
      op.replicas.forEach((m, slot) => {
        slotsOf(key).set(m, slot);
      });
    }
    if (op.op === 'promote') {
      owners.set(key, { ...op.value, modRevision: op.modRevision + 1 });
      slotsOf(key).set(op.value.member, 0);
    }
    if (op.op === 'grow') {
      owners.set(key, { ...op.value, modRevision: op.modRevision + 1 });
      slotsOf(key).set(op.member, op.slot);
    }
    if (op.op === 'assign') slotsOf(key).set(op.member, op.slot);
    if (op.op === 'unassign') slotsOf(key).delete(op.member);
  }
  return { ...state, owners, assigned };
}

/** The state after the members not in `alive` lost their leases (their assignments went with them). */
function leasesLost(state: AllocatorInput, ...dead: string[]): AllocatorInput {
  const live = new Map([...state.members].filter(([id]) => !dead.includes(id)));
  const assigned = new Map(
    [...state.assigned].map(([k, v]) => [k, new Map([...v].filter(([m]) => !dead.includes(m)))]),
  );
  return { ...state, members: live, assigned };
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
      input({ members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c'], ['b4', 'a']), specs: specs(['t', 8]) }),
    );
    const perZone = new Map<string, number>();
    const perMember = new Map<string, number>();
    for (const owner of state.owners.values()) {
      const zone = state.members.get(owner.member)!.zone;
      perZone.set(zone, (perZone.get(zone) ?? 0) + 1);
      perMember.set(owner.member, (perMember.get(owner.member) ?? 0) + 1);
    }
    assert.equal(state.owners.size, 8);
    // 8 partitions over 3 zones: 3, 3, 2, whatever the number of members in each.
    assert.deepEqual([...perZone.values()].sort(), [2, 3, 3]);
    // Zone a's share is split between its two members.
    assert.ok(Math.abs(perMember.get('b1')! - perMember.get('b4')!) <= 1, JSON.stringify([...perMember]));
    assert.deepEqual(planAllocation(state), [], 'a settled state plans nothing');
  });

  it('places R replicas in distinct zones, the primary in slot 0, and spreads the primaries', () => {
    const state = applied(
      input({
        members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c'], ['b4', 'a']),
        specs: specs(['t', 6, 3]),
      }),
    );
    const leading = new Map<string, number>();
    for (const [key, owner] of state.owners) {
      assert.equal(owner.replicas.length, 3);
      assert.equal(owner.replicas[0], owner.member);
      assert.deepEqual(owner.isr, owner.replicas, 'a new partition is in sync everywhere: it is empty');
      const zones = new Set(owner.replicas.map((r) => state.members.get(r)!.zone));
      assert.equal(zones.size, 3, `${key}: ${owner.replicas.join(',')} are not in three zones`);
      owner.replicas.forEach((r, slot) => {
        assert.equal(state.assigned.get(key)!.get(r), slot);
      });
      leading.set(owner.member, (leading.get(owner.member) ?? 0) + 1);
    }
    assert.ok(Math.max(...leading.values()) <= 2, `primaries not spread: ${JSON.stringify([...leading])}`);
    assert.deepEqual(planAllocation(state), []);
  });

  it('caps replicas at the live members', () => {
    const state = applied(input({ members: members(['b1', 'a'], ['b2', 'b']), specs: specs(['t', 1, 3]) }));
    assert.equal(state.owners.get('t/0')!.replicas.length, 2);
  });

  it('a partition short of its replication gains a live member in a zone it lacks, outside its in-sync set, until it has its replication', () => {
    const two = applied(input({ members: members(['b1', 'a'], ['b2', 'b']), specs: specs(['t', 1, 3]) }));
    const before = two.owners.get('t/0')!;
    assert.deepEqual(before.replicas.length, 2);
    // b4 shares zone a with b1; b3 brings zone c.
    const joined = { ...two, members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c'], ['b4', 'a']) };
    assert.deepEqual(planAllocation(joined), [
      {
        op: 'grow',
        topic: 't',
        partition: 0,
        member: 'b3',
        slot: 2,
        leaseId: 'Lb3',
        value: { member: before.member, replicas: [...before.replicas, 'b3'], isr: before.isr, epoch: 1 },
        modRevision: before.modRevision,
      },
    ]);
    const grown = applied(joined);
    assert.equal(grown.assigned.get('t/0')!.get('b3'), 2, 'the new replica is assigned its slot');
    assert.deepEqual(planAllocation(grown), [], 'never beyond the replication');
  });

  it('grows one replica at a time as members join, capped by the live members, onto the member with fewest copies', () => {
    let state = applied(input({ members: members(['b1', 'a']), specs: specs(['t', 2, 3], ['u', 1, 3]) }));
    assert.deepEqual(
      [...state.owners.values()].map((o) => o.replicas.length),
      [1, 1, 1],
      'one live member: one copy each',
    );
    state = { ...state, members: members(['b1', 'a'], ['b2', 'a']) };
    const ops = planAllocation(state);
    assert.deepEqual(
      ops.map((o) => (o.op === 'grow' ? `${o.topic}/${o.partition}+${o.member}` : o.op)),
      ['t/0+b2', 't/1+b2', 'u/0+b2'],
    );
    state = applied(state);
    assert.deepEqual(planAllocation(state), [], 'two live members: two copies is the most there can be');
    // Zone a is used by every partition: the copies decide; b3 and b4 hold none, b3 first by id.
    state = applied({ ...state, members: members(['b1', 'a'], ['b2', 'a'], ['b3', 'a'], ['b4', 'a']) });
    const added = [...state.owners.values()].map((o) => o.replicas[2]);
    assert.deepEqual(added, ['b3', 'b4', 'b3'], 'spread by copies held');
    assert.deepEqual(planAllocation(state), []);
  });

  it('never grows onto a replica it has (a dead one still counts), nor while the primary is gone or unassigned', () => {
    const owner: AllocatorOwner = {
      member: 'b1',
      replicas: ['b1', 'b2'],
      isr: ['b1'],
      epoch: 2,
      modRevision: 9,
    };
    const base = {
      specs: specs(['t', 1, 2]),
      owners: new Map([['t/0', owner]]),
      assigned: new Map([['t/0', new Map([['b1', 0]])]]),
    };
    // b2 is dead but keeps its place: two replicas is the replication.
    assert.deepEqual(planAllocation(input({ ...base, members: members(['b1', 'a'], ['b3', 'c']) })), []);
    const three = input({ ...base, specs: specs(['t', 1, 3]), members: members(['b1', 'a'], ['b2', 'b']) });
    assert.deepEqual(
      planAllocation({ ...three, assigned: new Map([['t/0', new Map([['b2', 1]])]]) }).map((o) => o.op),
      ['promote'],
      'a primary back under a new lease is promoted again first; nothing grows meanwhile',
    );
    assert.deepEqual(
      planAllocation(three).map((o) => o.op),
      ['assign'],
      'b2 is a replica already: nothing to add',
    );
  });

  it("promotes a live in-sync replica when the primary's lease is gone, with the epoch raised", () => {
    const settled = applied(
      input({ members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c']), specs: specs(['t', 1, 3]) }),
    );
    const before = settled.owners.get('t/0')!;
    const [primary, second, third] = before.replicas as [string, string, string];
    const ops = planAllocation(leasesLost(settled, primary));
    assert.deepEqual(ops, [
      {
        op: 'promote',
        topic: 't',
        partition: 0,
        from: primary,
        fromCreateRevision: 0,
        value: { member: second, replicas: [second, primary, third], isr: [second, third], epoch: 2 },
        modRevision: before.modRevision,
        leaseId: `L${second}`,
        memberCreateRevision: settled.members.get(second)!.createRevision,
      },
    ]);
    // Once promoted, the others get their new slots; the old primary is a replica when it returns.
    const promoted = applied(leasesLost(settled, primary));
    const back = applied({ ...promoted, members: settled.members });
    assert.deepEqual([...back.assigned.get('t/0')!].sort(), [
      [primary, 1],
      [second, 0],
      [third, 2],
    ]);
    assert.deepEqual(planAllocation(back), []);
  });

  it('a replicated primary back under a new lease keeps its place only in a new epoch', () => {
    const owner: AllocatorOwner = {
      member: 'b1',
      replicas: ['b1', 'b2'],
      isr: ['b1'],
      epoch: 3,
      modRevision: 9,
    };
    const ops = planAllocation(
      input({
        members: members(['b1', 'a'], ['b2', 'b']),
        specs: specs(['t', 1, 2]),
        owners: new Map([['t/0', owner]]),
      }),
    );
    assert.equal(ops.length, 1);
    const op = ops[0]!;
    assert.ok(op.op === 'promote');
    assert.deepEqual(op.value, { member: 'b1', replicas: ['b1', 'b2'], isr: ['b1'], epoch: 4 });
  });

  it('never promotes a replica that is not in sync: the partition waits without a primary', () => {
    const owner: AllocatorOwner = {
      member: 'b1',
      replicas: ['b1', 'b2', 'b3'],
      isr: ['b1', 'b3'],
      epoch: 4,
      modRevision: 9,
    };
    const state = input({
      members: members(['b2', 'b']),
      specs: specs(['t', 1, 3]),
      owners: new Map([['t/0', owner]]),
      assigned: new Map([['t/0', new Map([['b2', 1]])]]),
    });
    assert.deepEqual(planAllocation(state), [], 'b2 is live but out of sync; b3 is in sync but gone');
  });

  it('never moves an owned partition: a new member gets only new partitions', () => {
    const before = applied(input({ members: members(['b1', 'a'], ['b2', 'b']), specs: specs(['t', 4]) }));
    const joined = { ...before, members: members(['b1', 'a'], ['b2', 'b'], ['b3', 'c']) };
    assert.deepEqual(planAllocation(joined), [], 'the new member took nothing that was owned');
    const grown = applied({ ...joined, specs: specs(['t', 5]) });
    assert.equal(grown.owners.get('t/4')!.member, 'b3', 'the new partition went to the new, empty zone');
  });

  it("a dead owner's partitions without replicas stay its own (no primary) and are assigned again when it returns", () => {
    const settled = applied(input({ members: members(['b1', 'a'], ['b2', 'b']), specs: specs(['t', 2]) }));
    const deadOwner = settled.owners.get('t/0')!.member;
    const dead = leasesLost(settled, deadOwner);
    assert.deepEqual(planAllocation(dead), []);
    const back = members(['b1', 'a'], ['b2', 'b']);
    back.get(deadOwner)!.leaseId = 'new-lease';
    assert.deepEqual(planAllocation({ ...dead, members: back }), [
      { op: 'assign', topic: 't', partition: 0, member: deadOwner, slot: 0, leaseId: 'new-lease' },
    ]);
  });

  it("drops a deleted topic's owners; removes an assignment that is not a replica's", () => {
    const ops = planAllocation(
      input({
        members: members(['b1', 'a'], ['b2', 'b']),
        specs: specs(['kept', 1]),
        owners: new Map([
          ['gone/0', single('b1')],
          ['kept/0', single('b2')],
        ]),
        assigned: new Map([
          [
            'kept/0',
            new Map([
              ['b1', 0],
              ['b2', 0],
            ]),
          ],
        ]),
      }),
    );
    assert.deepEqual(ops, [
      { op: 'dropTopic', topic: 'gone' },
      { op: 'unassign', topic: 'kept', partition: 0, member: 'b1' },
    ]);
  });

  it('assigns nothing while no member is live', () => {
    assert.deepEqual(planAllocation(input({ specs: specs(['t', 3]) })), []);
  });
});
