/**
 * Reads from in-sync replicas with the TypeScript Client's `preferZone`, against a real cluster: three
 * broker processes in zones a, b and c on a real etcd, one topic with R=3. Readers preferring each
 * zone read from the replica there; through a SIGKILL of the primary (and its restart) none of them
 * sees the high watermark go back or a record that is later taken back, and every acknowledged record
 * is in the final log at its offset.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClusterKit, type KitBroker, replicaReads, startClusterKit } from '@booblik/broker/testing';
import { AckPolicy, Client, Connection } from '@booblik/client';
import { ReplicaFlag } from '@booblik/protocol';
import { buildGoProgram, PYTHON_CLIENT_DIR, runProgram } from './kit/client-programs.js';

const LEASE_MS = 2000;
const TOPIC = 'zoned';
/** Every wait of this test is bounded; a failover takes the lease and a few seconds. */
const WAIT_MS = 30_000;

let kit: ClusterKit;
before(async () => {
  kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS, flags: ['--replica.lag.max.millis=1000'] });
});
after(async () => {
  await kit?.cleanup();
});

const clientOptions = { routeRetryDelayMsMax: 300, routeAttemptsMax: 60, requestTimeoutMs: 5000 };

const until = (what: string, check: () => boolean | Promise<boolean>) => waitUntil(check, what, WAIT_MS, 20);

/** A reader over a Client preferring `zone`: what it was shown, checked as it goes. */
class ZoneReader {
  next = 0;
  highest = 0;
  readonly shown = new Map<number, string>();
  private stopping = false;
  private readonly running: Promise<void>;

  constructor(
    readonly zone: string,
    private readonly client: Client,
  ) {
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let result: Awaited<ReturnType<Client['fetch']>>;
      try {
        result = await this.client.fetch({
          topic: TOPIC,
          partition: 0,
          offset: this.next,
          maxBytes: 1 << 20,
          maxWaitMs: 100,
          minBytes: 1,
        });
      } catch {
        continue; // the Client's own attempts ran out during the failover: ask again
      }
      assert.ok(
        result.highWatermark >= this.highest,
        `zone ${this.zone}: the high watermark went back from ${this.highest} to ${result.highWatermark}`,
      );
      this.highest = result.highWatermark;
      for (const r of result.records) {
        assert.equal(r.offset, this.next, `zone ${this.zone}: records in order`);
        this.shown.set(r.offset, r.payload.toString());
        this.next++;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    await this.client.close();
  }
}

test('readers preferring each zone read from the in-sync replica there, and through a SIGKILL of the primary none sees the high watermark go back or a record taken back', async () => {
  const addresses = kit.brokers.map((b) => b.address);
  const admin = await Client.connect(addresses, clientOptions);
  await admin.applyTopics([{ op: 'upsert', spec: { name: TOPIC, partitions: 1, replication: 3 } }]);

  const acknowledged: { offset: number; payload: string }[] = [];
  let producing = true;
  const producer = (async () => {
    for (let seq = 0; producing; ) {
      const payload = `z-${seq}`;
      try {
        const r = await admin.produce(TOPIC, 0, [Buffer.from(payload)], { ack: AckPolicy.WRITTEN });
        acknowledged.push({ offset: r!.baseOffset, payload });
        seq++;
      } catch {
        // Not acknowledged: the oracle does not count it; the next record is a new one.
        seq++;
      }
    }
  })();
  const readers: ZoneReader[] = [];
  try {
    await until('the first acknowledgements', () => acknowledged.length >= 20);
    const primary = kit.brokers.find((b) => b.address === admin.routeOf(TOPIC, 0))!;
    const replicas = kit.brokers.filter((b) => b !== primary);
    const servedBefore = await Promise.all(replicas.map((b) => replicaReads(b.httpPort)));
    for (const b of kit.brokers)
      readers.push(
        new ZoneReader(b.zone, await Client.connect(addresses, { ...clientOptions, preferZone: b.zone })),
      );

    // Each replica serves the reader of its zone itself.
    await until('each replica answers reads from its zone', async () => {
      const served = await Promise.all(replicas.map((b) => replicaReads(b.httpPort)));
      return served.every((n, i) => n > servedBefore[i]!) && readers.every((r) => r.next >= 20);
    });

    const killedAt = acknowledged.length;
    await primary.kill();
    await until('writes resume on a new primary', () => acknowledged.length >= killedAt + 50);
    const restarting: KitBroker = primary;
    await restarting.start();
    await until('writes go on with the old primary back', () => acknowledged.length >= killedAt + 100);
    const end = acknowledged.length;
    await until('every reader reads past the failover', () => readers.every((r) => r.next >= end));
  } finally {
    producing = false;
    await producer;
    for (const r of readers) await r.stop();
  }

  // The final log, read from the primary now.
  const finalLog: string[] = [];
  for (;;) {
    const got = await admin.fetch({ topic: TOPIC, partition: 0, offset: finalLog.length, maxBytes: 1 << 20 });
    for (const r of got.records) finalLog.push(r.payload.toString());
    if (got.records.length === 0 || finalLog.length >= got.highWatermark) break;
  }
  await admin.close();
  for (const a of acknowledged) {
    assert.equal(finalLog[a.offset], a.payload, `acknowledged ${a.payload} at ${a.offset} lost or moved`);
  }
  for (const r of readers) {
    for (const [offset, payload] of r.shown) {
      assert.equal(
        finalLog[offset],
        payload,
        `zone ${r.zone} was shown ${payload} at ${offset}, later taken back`,
      );
    }
  }
});

const PYTHON_READER = `
import sys
sys.path.insert(0, sys.argv[1])
from booblik.client import Client
client = Client.connect([sys.argv[2]], prefer_zone=sys.argv[3])
got, offset, hw = [], 0, 0
while True:
    r = client.fetch("${TOPIC}", 0, offset, max_wait_millis=0)
    got += [rec.payload.decode() for rec in r.records]
    offset, hw = offset + len(r.records), max(hw, r.high_watermark)
    if not r.records or offset >= r.high_watermark:
        break
print("read", len(got), "last", got[-1], "hw", hw)
client.close()
`;

const GO_READER = `package main

import (
	"context"
	"fmt"
	"os"

	booblik "github.com/youndie/booblik/clients/go"
)

func main() {
	ctx := context.Background()
	client, err := booblik.NewClient(ctx, []string{os.Args[1]}, booblik.ClientConfig{PreferZone: os.Args[2]})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	var got []string
	var offset, hw int64
	for {
		r, err := client.Fetch(ctx, booblik.FetchRequest{Topic: "${TOPIC}", Partition: 0, Offset: offset})
		if err != nil {
			panic(err)
		}
		for _, rec := range r.Records {
			got = append(got, string(rec.Payload))
		}
		offset += int64(len(r.Records))
		hw = max(hw, r.HighWatermark)
		if len(r.Records) == 0 || offset >= r.HighWatermark {
			break
		}
	}
	fmt.Println("read", len(got), "last", got[len(got)-1], "hw", hw)
}
`;

import { waitUntil } from '@booblik/testkit';

test('the Python and Go Clients with a preferred zone read every record from the in-sync replica of that zone', async () => {
  // After the failover above: a replica that is not the primary, and what the primary holds.
  const connection = await Connection.connect(kit.brokers[0]!.address);
  let route: Awaited<ReturnType<Connection['metadataWithReplicas']>>['topics'][number]['partitions'][number];
  try {
    await until('every replica in sync', async () => {
      route = (await connection.metadataWithReplicas([TOPIC])).topics[0]!.partitions[0]!;
      const both = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
      return (
        route.route.replicas.length === 3 && route.route.replicas.every((r) => (r.flags & both) === both)
      );
    });
  } finally {
    await connection.close();
  }
  const replica = kit.brokers.find((b) => b.address !== route!.route.primary)!;
  const expected = `read ${route!.highWatermark} `;

  const pythonBefore = await replicaReads(replica.httpPort);
  const py = await runProgram('python3', [
    '-c',
    PYTHON_READER,
    PYTHON_CLIENT_DIR,
    kit.brokers[0]!.address,
    replica.zone,
  ]);
  assert.equal(py.code, 0, py.text);
  assert.ok(py.text.startsWith(expected), `Python read the whole partition: ${py.text}`);
  assert.ok(
    (await replicaReads(replica.httpPort)) > pythonBefore,
    'Python read from the replica of its zone',
  );

  const program = buildGoProgram(GO_READER);
  try {
    const goBefore = await replicaReads(replica.httpPort);
    const go = await runProgram(program.binary, [kit.brokers[0]!.address, replica.zone]);
    assert.equal(go.code, 0, go.text);
    assert.ok(go.text.startsWith(expected), `Go read the whole partition: ${go.text}`);
    assert.ok((await replicaReads(replica.httpPort)) > goBefore, 'Go read from the replica of its zone');
  } finally {
    program.remove();
  }
});
