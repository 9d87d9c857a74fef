import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKey, ErrorCode, encodeErrorResponse, encodeMetadataResponse } from '@booblik/protocol';
import { Client } from './client.js';
import { Connection } from './connection.js';
import { BrokerError, ConnectionClosedError, isOutcomeUnknown, OutcomeUnknownError } from './errors.js';
import { Producer } from './producer.js';
import { FakeBroker } from './test-support/fake-broker.js';
import { FakeCluster } from './test-support/fake-cluster.js';

const closers: { close(): Promise<void> }[] = [];
after(async () => {
  for (const c of closers) await c.close();
});

async function cluster(topics: Record<string, number>, nodes = 2): Promise<FakeCluster> {
  const c = await FakeCluster.start(topics, nodes);
  closers.push(c);
  return c;
}

/** Fast pauses: the tests wait on answers, never on the clock. */
const quick = { routeRetryDelayMs: 1, routeRetryDelayMsMax: 2 };
const payloads = (...s: string[]) => s.map((x) => Buffer.from(x));
const producesSeen = (c: FakeCluster) =>
  c.nodes.flatMap((n) => n.broker.received).filter((r) => r.apiKey === ApiKey.PRODUCE).length;

/** An OutcomeUnknownError for `what` that says the records may or may not be stored, and no "refused". */
function outcomeUnknownOf(what: string) {
  return (e: unknown) => {
    assert.ok(e instanceof OutcomeUnknownError, String(e));
    assert.ok(isOutcomeUnknown(e));
    assert.equal(e.code, ErrorCode.OUTCOME_UNKNOWN);
    assert.equal(e.retriable, false);
    assert.match(e.message, new RegExp(`^${what}: outcome unknown: .*may or may not have been stored`));
    assert.doesNotMatch(e.message, /refused/);
    return true;
  };
}

describe('outcome unknown (OUTCOME_UNKNOWN, 16)', () => {
  it('Client: a PRODUCE answered OUTCOME_UNKNOWN is sent once and reaches the caller as unknown, not refused', async () => {
    const c = await cluster({ t: 1 });
    c.nodes[0]!.script = ({ request }) =>
      request.apiKey === ApiKey.PRODUCE ? encodeErrorResponse(request.correlationId, 16) : undefined;
    const client = await Client.connect(
      c.nodes.map((n) => n.address),
      quick,
    );
    closers.push(client);
    await assert.rejects(client.produce('t', 0, payloads('x')), outcomeUnknownOf('PRODUCE t/0'));
    assert.equal(producesSeen(c), 1, 'never resent');
  });

  it('Connection and Topic: OUTCOME_UNKNOWN is an OutcomeUnknownError, and the connection goes on', async () => {
    const broker = await FakeBroker.start(({ request }) =>
      request.apiKey === ApiKey.METADATA
        ? encodeMetadataResponse(request.correlationId, [
            { name: 't', partitions: [{ partition: 0, logStartOffset: 0, highWatermark: 0 }] },
          ])
        : request.apiKey === ApiKey.PRODUCE
          ? encodeErrorResponse(request.correlationId, ErrorCode.OUTCOME_UNKNOWN)
          : encodeErrorResponse(request.correlationId, ErrorCode.UNSUPPORTED_VERSION),
    );
    closers.push(broker);
    const connection = await Connection.connect(broker.address);
    closers.push(connection);
    await assert.rejects(connection.produce('t', 0, payloads('x')), outcomeUnknownOf('PRODUCE t/0'));
    const topic = await connection.topic('t');
    await assert.rejects(topic.send('y'), outcomeUnknownOf('PRODUCE t/0'));
    assert.equal(connection.state, 'open');
  });

  it('Producer over a Client: a batch answered OUTCOME_UNKNOWN fails its records as unknown, sent once', async () => {
    const c = await cluster({ t: 1 });
    c.nodes[0]!.script = ({ request }) =>
      request.apiKey === ApiKey.PRODUCE ? encodeErrorResponse(request.correlationId, 16) : undefined;
    const producer = new Producer(await Client.connect(c.nodes[0]!.address, quick), { lingerMs: 0 });
    closers.push(producer);
    const sends = [producer.send('t', 'a', { partition: 0 }), producer.send('t', 'b', { partition: 0 })];
    for (const send of sends) await assert.rejects(send, outcomeUnknownOf('PRODUCE t/0'));
    assert.equal(producesSeen(c), 1);
  });

  it('Connection: a PRODUCE in flight when the connection is lost is unknown; a METADATA beside it is not', async () => {
    const broker = await FakeBroker.start();
    closers.push(broker);
    const connection = await Connection.connect(broker.address);
    const produce = connection.produce('t', 0, payloads('x'));
    const metadata = connection.metadata('t');
    await broker.nextRequest();
    (await broker.nextRequest()).peer.destroy();
    await assert.rejects(produce, (e: unknown) => {
      assert.ok(e instanceof ConnectionClosedError, String(e));
      assert.ok(isOutcomeUnknown(e));
      assert.match(
        e.message,
        /^PRODUCE t\/0: connection to .* lost before the answer: the records may or may not/,
      );
      return true;
    });
    await assert.rejects(
      metadata,
      (e: unknown) => e instanceof ConnectionClosedError && !isOutcomeUnknown(e),
    );
  });

  it('Client: a send lost in flight, then refusals until the attempts run out, is reported unknown, not refused', async () => {
    const c = await cluster({ t: 1 }, 1);
    const node = c.nodes[0]!;
    let produces = 0;
    node.script = ({ request, peer }) => {
      if (request.apiKey !== ApiKey.PRODUCE) return undefined;
      if (produces++ === 0) {
        peer.destroy(); // the first send may have been stored: its answer never comes
        return null;
      }
      return encodeErrorResponse(request.correlationId, ErrorCode.NO_PRIMARY);
    };
    const client = await Client.connect(node.address, { ...quick, routeAttemptsMax: 3 });
    closers.push(client);
    await assert.rejects(client.produce('t', 0, payloads('x')), (e: unknown) => {
      outcomeUnknownOf('PRODUCE t/0')(e);
      assert.ok(e instanceof Error && e.cause instanceof BrokerError);
      assert.equal((e.cause as BrokerError).code, ErrorCode.NO_PRIMARY);
      return true;
    });
    assert.equal(produces, 3);
  });
});
