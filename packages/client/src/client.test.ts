import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { ApiKey, ErrorCode, encodeErrorResponse, type Request } from '@booblik/protocol';
import { BrokerProcess } from '@booblik/testkit';
import { Client } from './client.js';
import { BrokerError } from './errors.js';
import { Producer } from './producer.js';
import { FakeCluster } from './test-support/fake-cluster.js';

const clusters: FakeCluster[] = [];
after(async () => {
  for (const c of clusters) await c.close();
});

async function cluster(topics: Record<string, number>, nodes = 2): Promise<FakeCluster> {
  const c = await FakeCluster.start(topics, nodes);
  clusters.push(c);
  return c;
}

/** Fast pauses: the tests wait on answers, never on the clock. */
const quick = { routeRetryDelayMs: 1, routeRetryDelayMsMax: 2 };

const payloads = (...s: string[]) => s.map((x) => Buffer.from(x));
const isDataRequest = (r: Request) => r.apiKey === ApiKey.PRODUCE || r.apiKey === ApiKey.FETCH;

async function fetchAll(client: Client, topic: string, partition: number): Promise<string[]> {
  const got = await client.fetch({ topic, partition, offset: 0, maxBytes: 1 << 16 });
  return got.records.map((r) => r.payload.toString());
}

describe('client: routes', () => {
  it('sends a partition routed to broker B to B, though it bootstrapped from A', async () => {
    const c = await cluster({ t: 2 });
    const [a, b] = c.nodes as [NonNullable<(typeof c.nodes)[0]>, NonNullable<(typeof c.nodes)[0]>];
    c.route('t', 1, b.address);
    const client = await Client.connect(a.address, quick);
    after(() => client.close());

    assert.equal((await client.produce('t', 1, payloads('x', 'y')))?.baseOffset, 0);
    assert.equal((await client.produce('t', 0, payloads('z')))?.baseOffset, 0);
    assert.deepEqual(await fetchAll(client, 't', 1), ['x', 'y']);

    assert.deepEqual(
      b.served.map((r) => [r.apiKey, r.apiVersion]),
      [
        [ApiKey.PRODUCE, 3],
        [ApiKey.FETCH, 3],
      ],
    );
    assert.deepEqual(
      a.served.map((r) => [r.apiKey, r.apiVersion]),
      [[ApiKey.PRODUCE, 3]],
    );
    assert.equal(client.routeOf('t', 1), b.address);
  });

  it('follows NOT_PRIMARY to the route in the answer, without another METADATA', async () => {
    const c = await cluster({ t: 1 });
    const [a, b] = c.nodes as [NonNullable<(typeof c.nodes)[0]>, NonNullable<(typeof c.nodes)[0]>];
    const client = await Client.connect([a.address, b.address], quick);
    after(() => client.close());
    assert.equal((await client.produce('t', 0, payloads('first')))?.baseOffset, 0);
    const metadataBefore = a.metadataSeen.length + b.metadataSeen.length;

    c.route('t', 0, b.address); // the partition moved: A now answers NOT_PRIMARY naming B
    assert.equal((await client.produce('t', 0, payloads('second')))?.baseOffset, 1);
    assert.deepEqual(await fetchAll(client, 't', 0), ['first', 'second']);

    assert.equal(a.metadataSeen.length + b.metadataSeen.length, metadataBefore);
    assert.equal(b.served.filter(isDataRequest).length, 2);
    assert.equal(client.routeOf('t', 0), b.address);
  });

  it('NO_PRIMARY twice: pauses, reads METADATA again each time, then the batch is acknowledged', async () => {
    const c = await cluster({ t: 1 });
    const a = c.nodes[0]!;
    let refusals = 2;
    a.script = ({ request }) =>
      request.apiKey === ApiKey.PRODUCE && refusals-- > 0
        ? encodeErrorResponse(request.correlationId, ErrorCode.NO_PRIMARY)
        : undefined;
    const client = await Client.connect(a.address, quick);
    after(() => client.close());

    assert.equal((await client.produce('t', 0, payloads('r')))?.baseOffset, 0);
    assert.deepEqual(c.log.records('t', 0).map(String), ['r']);
    assert.equal(a.metadataSeen.length, 3, 'one METADATA to learn the route, one after each NO_PRIMARY');
  });

  it('NO_PRIMARY that never ends reaches the caller once the attempts are spent', async () => {
    const c = await cluster({ t: 1 });
    c.route('t', 0, ''); // nobody serves it: METADATA says so
    const client = await Client.connect(c.nodes[0]!.address, { ...quick, routeAttemptsMax: 3 });
    after(() => client.close());
    await assert.rejects(client.produce('t', 0, payloads('lost')), (e: unknown) => {
      assert.ok(e instanceof BrokerError, String(e));
      assert.equal(e.code, ErrorCode.NO_PRIMARY);
      assert.equal(e.retriable, true);
      return true;
    });
    assert.equal(c.nodes[0]!.metadataSeen.length, 3);
    assert.deepEqual(c.log.records('t', 0), []);
  });

  it('a refusal that is not retriable reaches the caller at once', async () => {
    const c = await cluster({ t: 1 });
    const client = await Client.connect(c.nodes[0]!.address, quick);
    after(() => client.close());
    await assert.rejects(
      client.produce('t', 5, payloads('x')),
      (e: unknown) => e instanceof BrokerError && e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    );
  });

  it("the primary's connection is cut mid-stream: METADATA from the other broker names the new primary", async () => {
    const c = await cluster({ t: 1 });
    const [a, b] = c.nodes as [NonNullable<(typeof c.nodes)[0]>, NonNullable<(typeof c.nodes)[0]>];
    c.route('t', 0, b.address);
    const client = await Client.connect(a.address, quick);
    after(() => client.close());
    const consumer = client.consumer('t', 0, 0, { maxWaitMs: 0 });
    assert.equal((await client.produce('t', 0, payloads('a0')))?.baseOffset, 0);
    assert.deepEqual(
      (await consumer.poll()).map((r) => [r.offset, r.payload.toString()]),
      [[0, 'a0']],
    );

    // B dies with a fetch on the wire; A takes the partition over.
    b.script = ({ peer }) => {
      c.route('t', 0, a.address);
      void b.broker.close();
      peer.destroy();
      return null;
    };
    assert.equal((await client.produce('t', 0, payloads('a1')))?.baseOffset, 1);
    assert.deepEqual(
      (await consumer.poll()).map((r) => [r.offset, r.payload.toString()]),
      [[1, 'a1']],
    );
    assert.equal(client.routeOf('t', 0), a.address);
    assert.equal(a.served.filter((r) => r.apiKey === ApiKey.PRODUCE).length, 1);
  });

  it("after applyTopics, METADATA v3 carries the APPLY's revision", async () => {
    const c = await cluster({ t: 1 });
    const [a, b] = c.nodes as [NonNullable<(typeof c.nodes)[0]>, NonNullable<(typeof c.nodes)[0]>];
    const client = await Client.connect([a.address, b.address], quick);
    after(() => client.close());
    const { revision } = await client.applyTopics([{ op: 'upsert', spec: { name: 't', partitions: 1 } }]);
    assert.ok(revision > 1);
    await client.produce('t', 0, payloads('x'));
    const seen = [...a.metadataSeen, ...b.metadataSeen];
    assert.deepEqual(seen, [{ version: 3, topics: ['t'], minRevision: revision }]);
  });

  it('Producer.connect takes a list: a dead bootstrap address is skipped, records land on their primary', async () => {
    const c = await cluster({ t: 2 });
    const [a, b] = c.nodes as [NonNullable<(typeof c.nodes)[0]>, NonNullable<(typeof c.nodes)[0]>];
    c.route('t', 1, b.address);
    const dead = await cluster({ t: 1 }, 1);
    const deadAddress = dead.nodes[0]!.address;
    await dead.close();
    const producer = await Producer.connect([deadAddress, a.address], { ...quick, lingerMs: 0 });
    const offsets = await Promise.all([
      producer.send('t', 'p1', { partition: 1 }),
      producer.send('t', 'p0', { partition: 0 }),
    ]);
    await producer.close();
    assert.deepEqual(offsets, [0, 0]);
    assert.deepEqual(c.log.records('t', 1).map(String), ['p1']);
    assert.equal(b.served.length, 1);
    assert.equal(a.served.length, 1);
  });
});

describe('client: against a real single-node broker', () => {
  it('sends PRODUCE, FETCH and METADATA v3, and everything works as through a Connection', async (t) => {
    const broker = (await BrokerProcess.start(t, { http: false, flags: ['--topics=orders:2'] })).address;
    // Every request is one socket write of one whole frame: its header says the API and version.
    const seen: { apiKey: number; apiVersion: number }[] = [];
    const write = net.Socket.prototype.write;
    net.Socket.prototype.write = function (this: net.Socket, chunk: unknown, ...rest: unknown[]) {
      if (
        Buffer.isBuffer(chunk) &&
        `${this.remoteAddress}:${this.remotePort}` === broker &&
        chunk.length >= 8
      ) {
        seen.push({ apiKey: chunk.readInt16BE(4), apiVersion: chunk.readInt16BE(6) });
      }
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof write;
    t.after(() => {
      net.Socket.prototype.write = write;
    });
    const client = await Client.connect(broker);
    t.after(() => client.close());

    const topic = await client.topic('orders');
    const sent = await topic.send('hello', { key: 'k' });
    assert.equal(sent.offset, 0);
    assert.deepEqual(await fetchAll(client, 'orders', sent.partition), ['hello']);
    // A single broker is every partition's primary, at the address it was reached by.
    assert.equal(client.routeOf('orders', sent.partition), broker);

    const versions = (key: number) => [
      ...new Set(seen.filter((h) => h.apiKey === key).map((h) => h.apiVersion)),
    ];
    assert.deepEqual(versions(ApiKey.PRODUCE), [3]);
    assert.deepEqual(versions(ApiKey.FETCH), [3]);
    assert.deepEqual(versions(ApiKey.METADATA), [3]);
  });
});
