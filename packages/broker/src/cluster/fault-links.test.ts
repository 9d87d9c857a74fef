import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, createTopic, primaries, produceV1, until } from '../test-support/cluster-wire.js';

const LEASE_MS = 2000;
/**
 * A black-holed etcd link is noticed by the client's own clock, not by a refused connection: a
 * keepalive unanswered for a lease, a retry, and the lease given up past two leases.
 */
const LEASE_LOST_WITHIN_MS = LEASE_MS * 6;
/** A cut link is refused at once, so the proxying broker answers at once too, well inside this. */
const CUT_ANSWERED_WITHIN_MS = 3000;

describe('a three-broker cluster whose every link runs through a fault proxy', () => {
  let kit: ClusterKit;
  const [b1, b2, b3] = [0, 1, 2];

  before(async () => {
    kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS, faultLinks: true });
  });
  after(async () => {
    await kit?.cleanup();
  });

  const address = (index: number) => kit.brokers[index]!.address;
  const readyz = async (index: number) =>
    (await fetch(`http://127.0.0.1:${kit.brokers[index]!.httpPort}/readyz`)).status;

  async function produceVia(index: number, topic: string, partition: number, record: string) {
    const client = await connect(address(index));
    try {
      return await produceV1(client, topic, partition, [record]);
    } finally {
      client.close();
    }
  }

  test('with the link b1 -> b2 cut, a produce through b1 to b2 fails at once, through b3 it is acknowledged, and after heal through b1 too', async () => {
    const client = await connect(address(b1));
    await createTopic(client, 'links', 6);
    const routes = await primaries(client, 'links');
    client.close();
    const partition = routes.indexOf(address(b2));
    assert.ok(partition >= 0, `b2 is the primary of some partition: ${routes}`);
    const link = kit.peerLink(b1, b2);
    assert.equal(await produceVia(b1, 'links', partition, 'before'), 0);
    assert.ok(link.stats.accepted >= 1, 'b1 reached b2 through the proxy');

    link.cut();
    const started = performance.now();
    // The cut link takes b1's connection and resets it. Reset before b1 saw it connect, nothing was
    // sent (NO_PRIMARY); after, b1 cannot know whether the request reached b2 (OUTCOME_UNKNOWN). Never
    // an acknowledgement, and nothing is written either way (the offsets below).
    await assert.rejects(
      produceVia(b1, 'links', partition, 'cut off'),
      /PRODUCE links-\d+: (NO_PRIMARY|OUTCOME_UNKNOWN)/,
    );
    const answeredMs = performance.now() - started;
    assert.ok(answeredMs < CUT_ANSWERED_WITHIN_MS, `answered in ${answeredMs.toFixed(0)} ms`);
    assert.ok(link.stats.refused >= 1, 'b1 dialled b2 through the proxy and was refused');
    assert.equal(await produceVia(b3, 'links', partition, 'around'), 1, 'b3 -> b2 is untouched');

    link.heal();
    assert.equal(await produceVia(b1, 'links', partition, 'healed'), 2, 'nothing written while cut');
  });

  test("with b1's etcd link black-holed past the lease, b1's /readyz turns 503 while b2 and b3 stay ready; after heal b1 is ready again", async (t) => {
    for (const b of [b1, b2, b3]) assert.equal(await readyz(b), 200);
    const link = kit.etcdLink(b1);
    /** b2's and b3's /readyz at every look while b1 loses its lease. */
    const others: number[][] = [];
    link.blackhole();
    try {
      const took = await until(
        async () => {
          const [first, ...rest] = await Promise.all([b1, b2, b3].map(readyz));
          others.push(rest);
          return first;
        },
        (status) => status === 503,
        "b1's /readyz 503",
        LEASE_LOST_WITHIN_MS,
      );
      assert.deepEqual(
        others.filter((statuses) => statuses.some((s) => s !== 200)),
        [],
        'b2 and b3 stay ready',
      );
      assert.ok(took >= LEASE_MS, `not ready after ${took.toFixed(0)} ms: no sooner than its lease`);
      t.diagnostic(`b1 not ready ${took.toFixed(0)} ms into the black hole`);
      assert.ok(link.stats.bytesDropped > 0, "b1's keepalives went into the black hole");
    } finally {
      link.heal();
    }
    const back = await until(
      () => readyz(b1),
      (status) => status === 200,
      "b1's /readyz 200 after heal",
      20_000,
    );
    t.diagnostic(`b1 ready again ${back.toFixed(0)} ms after heal`);
    for (const b of [b2, b3]) assert.equal(await readyz(b), 200);
  });
});
