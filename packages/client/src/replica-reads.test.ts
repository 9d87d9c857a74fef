import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  ApiKey,
  ErrorCode,
  encodeFetchResponseHeader,
  encodeNotPrimaryResponse,
  MetadataOffsets,
  ReplicaFlag,
  type Request,
} from '@booblik/protocol';
import { BrokerProcess } from '@booblik/testkit';
import { Client } from './client.js';
import { BrokerError, InvalidArgumentError } from './errors.js';
import { FakeCluster, type FakeClusterNode } from './test-support/fake-cluster.js';

const clusters: FakeCluster[] = [];
after(async () => {
  for (const c of clusters) await c.close();
});

const quick = { routeRetryDelayMs: 1, routeRetryDelayMsMax: 2 };
const payloads = (...s: string[]) => s.map((x) => Buffer.from(x));
const fetches = (node: FakeClusterNode) =>
  node.served.filter((r: Request) => r.apiKey === ApiKey.FETCH).map((r) => r.apiVersion);

/** Three nodes in zones a, b, c; partition t/0 with node 0 primary and the others its replicas. */
async function zoned(options: { bInSync?: boolean; bLive?: boolean } = {}) {
  const c = await FakeCluster.start({ t: 1 }, 3);
  clusters.push(c);
  const [a, b, z] = c.nodes as [FakeClusterNode, FakeClusterNode, FakeClusterNode];
  c.replicas('t', 0, { address: a.address, zone: 'a' }, [
    {
      address: b.address,
      zone: 'b',
      ...(options.bInSync === undefined ? {} : { inSync: options.bInSync }),
      ...(options.bLive === undefined ? {} : { live: options.bLive }),
    },
    { address: z.address, zone: 'c' },
  ]);
  const producer = await Client.connect(a.address, quick);
  after(() => producer.close());
  await producer.produce('t', 0, payloads('x', 'y', 'z'));
  return { c, a, b, z };
}

async function reader(bootstrap: string, preferZone?: string): Promise<Client> {
  const client = await Client.connect(bootstrap, {
    ...quick,
    ...(preferZone === undefined ? {} : { preferZone }),
  });
  after(() => client.close());
  return client;
}

const fetchFrom0 = (client: Client) =>
  client.fetch({ topic: 't', partition: 0, offset: 0, maxBytes: 1 << 16 });

describe('client: reads from replicas (preferZone)', () => {
  it('a fetch goes to the in-sync replica of the preferred zone as FETCH v4, not to the primary', async () => {
    const { a, b } = await zoned();
    const client = await reader(a.address, 'b');
    const got = await fetchFrom0(client);
    assert.deepEqual(
      got.records.map((r) => r.payload.toString()),
      ['x', 'y', 'z'],
    );
    assert.deepEqual(fetches(b), [4], 'served by the zone-b replica');
    assert.deepEqual(fetches(a), [], 'the primary served no fetch');
    assert.equal(a.metadataSeen.at(-1)?.version, 4, 'METADATA v4 names the replicas and zones');
  });

  it('the primary is read from when it is in the preferred zone itself', async () => {
    const { a, b } = await zoned();
    const client = await reader(b.address, 'a');
    await fetchFrom0(client);
    assert.deepEqual(fetches(a), [3]);
    assert.deepEqual(fetches(b), []);
  });

  for (const [what, options] of [
    ['out of the in-sync set', { bInSync: false }],
    ['not live', { bLive: false }],
  ] as const) {
    it(`a replica ${what} is never read from: the fetch goes to the primary`, async () => {
      const { a, b } = await zoned(options);
      const client = await reader(a.address, 'b');
      await fetchFrom0(client);
      assert.deepEqual(fetches(b), []);
      assert.deepEqual(fetches(a), [3]);
    });
  }

  it('no replica in the preferred zone: the fetch goes to the primary', async () => {
    const { a, b, z } = await zoned();
    const client = await reader(a.address, 'elsewhere');
    await fetchFrom0(client);
    assert.deepEqual([fetches(a), fetches(b), fetches(z)], [[3], [], []]);
  });

  it('NOT_PRIMARY from the replica: the primary serves the fetch, and the route is read again before the next pick', async () => {
    const { a, b } = await zoned();
    const client = await reader(a.address, 'b');
    let refusals = 1;
    b.script = (req) => {
      const { request } = req;
      if (request.apiKey !== ApiKey.FETCH || refusals === 0) return undefined;
      refusals--;
      return encodeNotPrimaryResponse(request.correlationId, { primary: a.address, replicas: [] });
    };
    const first = await fetchFrom0(client);
    assert.equal(first.count, 3, 'answered by the primary after the replica refused');
    assert.deepEqual(fetches(a), [3]);
    const metadataBefore = a.metadataSeen.length + b.metadataSeen.length;
    await fetchFrom0(client);
    assert.ok(a.metadataSeen.length + b.metadataSeen.length > metadataBefore, 'METADATA asked again');
    assert.deepEqual(fetches(b), [4], 'the replica picked again once the route said it is in sync');
  });

  it('a replica whose high watermark trails one shown before: the reported high watermark does not go back', async () => {
    const { a, b } = await zoned();
    const client = await reader(a.address, 'b');
    assert.equal((await fetchFrom0(client)).highWatermark, 3);
    b.script = (req) =>
      req.request.apiKey === ApiKey.FETCH
        ? encodeFetchResponseHeader(req.request.correlationId, 1, 0)
        : undefined;
    const trailing = await client.fetch({ topic: 't', partition: 0, offset: 3, maxBytes: 1 << 16 });
    assert.equal(trailing.count, 0);
    assert.equal(trailing.highWatermark, 3, 'the highest high watermark seen, not the replica trailing one');
  });

  it('brokers without METADATA v4: v3, and reads from the primary', async () => {
    const { c, a, b } = await zoned();
    c.v4 = false;
    const client = await reader(a.address, 'b');
    await fetchFrom0(client);
    assert.deepEqual(fetches(b), []);
    assert.equal(a.metadataSeen.at(-1)?.version, 3);
  });

  it('without preferZone nothing sends METADATA v4 or FETCH v4', async () => {
    const { a, b } = await zoned();
    const client = await reader(a.address);
    await fetchFrom0(client);
    assert.deepEqual([fetches(a), fetches(b)], [[3], []]);
    assert.ok(a.metadataSeen.every((m) => m.version <= 3));
  });

  it('metadataWithReplicas shows every replica with its zone and in-sync flag; a broker without v4 refuses it', async () => {
    const { c, a, b, z } = await zoned({ bInSync: false });
    const client = await reader(a.address);
    const [topic] = (await client.metadataWithReplicas('t')).topics;
    const route = topic!.partitions[0]!.route;
    assert.equal(route.primary, a.address);
    assert.deepEqual(
      route.replicas.map((r) => [r.address, r.zone, r.flags]),
      [
        [a.address, 'a', ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE],
        [b.address, 'b', ReplicaFlag.LIVE],
        [z.address, 'c', ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE],
      ],
    );
    c.v4 = false;
    const older = await reader(a.address);
    await assert.rejects(
      older.metadataWithReplicas('t'),
      (e: unknown) => e instanceof BrokerError && e.code === ErrorCode.UNSUPPORTED_VERSION,
    );
  });

  it('an empty preferZone is refused before anything is sent', async () => {
    const { a } = await zoned();
    await assert.rejects(Client.connect(a.address, { preferZone: '' }), InvalidArgumentError);
  });

  it('against a real single broker, preferZone reads work and the broker is its own route', async (t) => {
    const address = (await BrokerProcess.start(t, { http: false })).address;
    const client = await Client.connect(address, { preferZone: 'any' });
    t.after(() => client.close());
    await client.applyTopics([{ op: 'upsert', spec: { name: 'single', partitions: 1 } }]);
    await client.produce('single', 0, payloads('one', 'two'));
    const got = await client.fetch({ topic: 'single', partition: 0, offset: 0, maxBytes: 1 << 16 });
    assert.deepEqual(
      got.records.map((r) => r.payload.toString()),
      ['one', 'two'],
    );
    assert.equal(client.routeOf('single', 0), address);
  });

  it('against a real single broker, metadataWithOffsets says the offsets come from the primary', async (t) => {
    const address = (await BrokerProcess.start(t, { http: false })).address;
    const client = await Client.connect(address);
    t.after(() => client.close());
    await client.applyTopics([{ op: 'upsert', spec: { name: 'offsets', partitions: 1 } }]);
    await client.produce('offsets', 0, payloads('one', 'two', 'three'));
    const [p] = (await client.metadataWithOffsets('offsets')).topics[0]!.partitions;
    assert.deepEqual(
      [p!.logStartOffset, p!.highWatermark, p!.offsets],
      [0, 3, MetadataOffsets.PRIMARY],
      'one node is the primary of every partition',
    );
  });
});
