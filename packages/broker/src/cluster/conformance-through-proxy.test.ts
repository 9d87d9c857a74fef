import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, primaries } from '../test-support/cluster-wire.js';
import { passConformanceThrough } from '../test-support/conformance-through.js';

let kit: ClusterKit;
before(async () => {
  kit = await startClusterKit({ brokers: 2, start: false });
  const [proxying, primary] = kit.brokers as [
    NonNullable<ClusterKit['brokers'][0]>,
    NonNullable<ClusterKit['brokers'][1]>,
  ];
  // The primary alone creates the conformance topics, so it owns every partition of them.
  await primary.start(['--topics=conformance:3,single:1']);
  await proxying.start(['--topics=conformance:3,single:1']);
});
after(async () => {
  await kit?.cleanup();
});

test('the Python and TypeScript clients pass their 14 checks through a broker that proxies every partition', async () => {
  const [proxying, primary] = kit.brokers as [
    NonNullable<ClusterKit['brokers'][0]>,
    NonNullable<ClusterKit['brokers'][1]>,
  ];
  const client = await connect(proxying.address);
  for (const topic of ['conformance', 'single']) {
    assert.ok(
      (await primaries(client, topic)).every((r) => r === primary.address),
      `${topic} served by the other broker only`,
    );
  }
  client.close();
  await passConformanceThrough(proxying);
});
