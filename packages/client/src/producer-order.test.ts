import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, ErrorCode, encodeErrorResponse } from '@booblik/protocol';
import { Client } from './client.js';
import { Producer } from './producer.js';
import { FakeCluster } from './test-support/fake-cluster.js';
import { ManualClock } from './test-support/manual-clock.js';

const clusters: FakeCluster[] = [];
after(async () => {
  for (const c of clusters) await c.close();
});

/**
 * Resolves once `done()` holds, advancing `clock` 100 ms a step and letting the sockets turn between
 * steps; fails after `stepsMax` steps.
 */
async function advanceUntil(clock: ManualClock, done: () => boolean, stepsMax = 200): Promise<void> {
  for (let step = 0; !done(); step++) {
    if (step >= stepsMax) throw new Error(`still not done after ${stepsMax} steps of 100 ms`);
    clock.advance(100);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Resolves once `done()` holds while the manual clock stands still; fails after 5 s of real time. */
async function realTimeUntil(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('still not done after 5 s');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * A failover with batches in flight: the old primary A answers every PRODUCE NO_PRIMARY once the
 * partition moved to B, so the Client pauses each batch (on a manual clock) and sends it again to B.
 * Records sent while those pauses run go to B at once (the route is already known): before the
 * producer kept one batch per partition in flight, they landed ahead of the earlier ones.
 */
async function failover(
  producerOptions: { maxInFlightPerPartition?: number },
  steps: { resendsPaused: number; laterLandFirst: boolean } = { resendsPaused: 1, laterLandFirst: false },
) {
  const cluster = await FakeCluster.start({ t: 1 }, 2);
  clusters.push(cluster);
  const [a, b] = cluster.nodes as [
    NonNullable<(typeof cluster.nodes)[0]>,
    NonNullable<(typeof cluster.nodes)[0]>,
  ];
  const clock = new ManualClock();
  const client = await Client.connect([a.address, b.address], { clock, routeRetryDelayMs: 100 });
  const producer = new Producer(client, { clock, maxBatchRecords: 1, ...producerOptions });
  let refused = 0;
  a.script = ({ request }) => {
    if (request.apiKey !== ApiKey.PRODUCE) return undefined;
    cluster.route('t', 0, b.address); // the primary failed over to B with these batches on the wire
    refused++;
    return encodeErrorResponse(request.correlationId, ErrorCode.NO_PRIMARY);
  };
  const settled: string[] = [];
  const send = (payload: string) =>
    producer.send('t', payload, { partition: 0 }).then(() => settled.push(payload));
  const timersIdle = clock.pendingTimers;
  const sends = ['r1', 'r2', 'r3'].map(send);
  // Each refused batch waits for its resend on the manual clock, which stands still meanwhile.
  await realTimeUntil(() => clock.pendingTimers === timersIdle + steps.resendsPaused);
  sends.push(...['r4', 'r5'].map(send)); // sent during the failover
  // Held still, the clock keeps the resends back: the later batches reach B first if they can.
  if (steps.laterLandFirst) await realTimeUntil(() => settled.length === 2);
  await advanceUntil(clock, () => settled.length === 5);
  await Promise.all(sends);
  await producer.close();
  return { landed: cluster.log.records('t', 0).map(String), refused };
}

describe('producer: order within a partition', () => {
  it('records land in send order across a failover with several batches sent', async () => {
    const { landed } = await failover({});
    assert.deepEqual(landed, ['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('maxInFlightPerPartition above 1 pipelines a partition: batches sent later can overtake a resent one', async () => {
    const { landed, refused } = await failover(
      { maxInFlightPerPartition: 5 },
      { resendsPaused: 3, laterLandFirst: true },
    );
    assert.equal(refused, 3, 'all three batches were on the wire to A at once');
    assert.deepEqual(landed.slice(0, 2), ['r4', 'r5'], 'the later batches overtook the resent ones');
    assert.deepEqual([...landed].sort(), ['r1', 'r2', 'r3', 'r4', 'r5']);
  });
});
