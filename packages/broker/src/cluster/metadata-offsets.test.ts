import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  decodeMetadataResponseV5,
  encodeMetadataRequestV5,
  encodeProduceRequest,
  MetadataOffsets,
} from '@booblik/protocol';
import { startCli } from '@booblik/testkit';
import { type ClusterKit, startClusterKit } from '../test-support/cluster-kit.js';
import { connect, metadata, ok, until } from '../test-support/cluster-wire.js';
import { ReplicatedTopic } from '../test-support/replicated-topic.js';
import { seeded } from '../test-support/replication-oracle.js';

const LEASE_MS = 2000;

describe('METADATA when no copy of a partition answers: three brokers, a topic on two', () => {
  let kit: ClusterKit;

  before(async () => {
    kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS });
  });
  after(async () => {
    await kit?.cleanup();
  });

  test('the offsets are said to be unknown (METADATA v5, booblik metadata and consume) rather than shown as 0..0, which v3 cannot avoid', async () => {
    const topic = new ReplicatedTopic(kit, 'two-copies', seeded(1));
    await topic.create(2);
    const primary = await topic.primary(10_000);
    const client = await connect(primary.address);
    try {
      for (let i = 0; i < 5; i++) {
        const id = client.id();
        client.send(
          encodeProduceRequest(id, {
            topic: topic.name,
            partition: 0,
            ack: 1,
            records: [Buffer.from(`r${i}`)],
          }),
        );
        ok(await client.expect(id), 'PRODUCE');
      }
    } finally {
      client.close();
    }
    const holders = (await topic.routeVia(primary)).replicas.concat(primary.address);
    const outsider = kit.brokers.find((b) => !holders.includes(b.address))!;
    const asked = await connect(outsider.address);
    try {
      const v5 = async () => {
        const id = asked.id();
        asked.send(encodeMetadataRequestV5(id, { topics: [topic.name], minRevision: 0, flags: 0 }));
        return decodeMetadataResponseV5(ok(await asked.expect(id), 'METADATA v5')).topics[0]!.partitions[0]!;
      };
      // Asked of its primary while it is up (once the outsider's copy has the topic).
      await until(
        v5,
        (p) => p.offsets === MetadataOffsets.PRIMARY && p.highWatermark === 5,
        'offsets from the primary',
        10_000,
      );
      for (const b of kit.brokers) if (b !== outsider) await b.kill();
      await until(v5, (p) => p.route.primary === '', 'both holders gone, no primary named', LEASE_MS * 4);
      const p = await v5();
      assert.deepEqual(
        [p.offsets, p.logStartOffset, p.highWatermark],
        [MetadataOffsets.UNKNOWN, 0, 0],
        'no copy answers: not known, and said so',
      );
      const older = (await metadata(asked, [topic.name])).topics[0]!.partitions[0]!;
      assert.deepEqual(
        [older.route.primary, older.highWatermark],
        ['', 0],
        'v3 has no way to say it: 0 and no route',
      );
      const cli = startCli(['metadata', topic.name, '--broker', outsider.address]);
      assert.equal(await cli.exitCode(20_000), 0, cli.output());
      assert.match(
        cli.output(),
        /two-copies\s+0\s+unknown\s+unknown\s/,
        'booblik metadata says unknown, not 0',
      );
      const consume = startCli(['consume', topic.name, '--from', '3', '--broker', outsider.address]);
      assert.equal(await consume.exitCode(20_000), 1, consume.output());
      assert.match(
        consume.output(),
        /two-copies: the offsets of partition\(s\) 0 are not known right now/,
        'consume says the offsets are not known, not that offset 3 is outside 0..0',
      );
    } finally {
      asked.close();
    }
  });
});
