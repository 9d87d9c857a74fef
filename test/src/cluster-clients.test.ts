/**
 * Clients that follow routes, against a real cluster: three broker processes on a real etcd. The
 * TypeScript Client bootstraps from one broker, sends each partition's batches to its primary
 * (nothing is proxied), and across a primary's SIGKILL and restart keeps every acknowledged record.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClusterKit, proxiedRequests, startClusterKit } from '@booblik/broker/testing';
import { AckPolicy, Client } from '@booblik/client';
import { buildGoProgram, PYTHON_CLIENT_DIR, runProgram } from './kit/client-programs.js';

const LEASE_MS = 2000;
let kit: ClusterKit;
before(async () => {
  kit = await startClusterKit({ brokers: 3, leaseMs: LEASE_MS });
});
after(async () => {
  await kit?.cleanup();
});

test('the route-following Client sends to each primary directly and keeps every acknowledged record through a SIGKILL', async () => {
  const bootstrap = kit.brokers[0]!;
  const client = await Client.connect([bootstrap.address], {
    routeRetryDelayMsMax: 500,
    routeAttemptsMax: 20,
  });
  try {
    await client.applyTopics([{ op: 'upsert', spec: { name: 'routed', partitions: 6 } }]);
    const proxiedBefore = await Promise.all(kit.brokers.map((b) => proxiedRequests(b.httpPort)));
    const acknowledged: string[][] = Array.from({ length: 6 }, () => []);
    const send = async (p: number, text: string) => {
      const r = await client.produce('routed', p, [Buffer.from(text)], { ack: AckPolicy.WRITTEN });
      assert.equal(
        r?.baseOffset,
        acknowledged[p]!.length,
        `routed-${p}: at the end of what was acknowledged`,
      );
      acknowledged[p]!.push(text);
    };
    for (let p = 0; p < 6; p++) await send(p, `first-${p}`);
    const proxiedAfter = await Promise.all(kit.brokers.map((b) => proxiedRequests(b.httpPort)));
    assert.deepEqual(
      proxiedAfter,
      proxiedBefore,
      'no broker proxied anything: each batch went to its primary',
    );

    // Kill the primary of partition 0 (not the bootstrap broker) and bring it back while producing.
    const victimAddress = client.routeOf('routed', 0) ?? '';
    const victim = kit.brokers.find((b) => b.address === victimAddress && b !== bootstrap) ?? kit.brokers[1]!;
    await victim.kill();
    const restarting = victim.start();
    for (let p = 0; p < 6; p++) await send(p, `during-${p}`);
    await restarting;
    for (let p = 0; p < 6; p++) await send(p, `after-${p}`);

    for (let p = 0; p < 6; p++) {
      const got = await client.fetch({ topic: 'routed', partition: p, offset: 0, maxBytes: 1 << 20 });
      assert.deepEqual(
        got.records.map((r) => r.payload.toString()),
        acknowledged[p],
        `routed-${p}: every acknowledged record, at its offset`,
      );
    }
  } finally {
    await client.close();
  }
});

const PYTHON_CLIENT = `
import sys
sys.path.insert(0, sys.argv[1])
from booblik import AckPolicy
from booblik.client import Client
from booblik.topics import TopicSpec, Upsert
client = Client.connect([sys.argv[2]])
client.apply_topics([Upsert(TopicSpec("routed-py", 3))])
for p in range(3):
    for i in range(2):
        r = client.produce("routed-py", p, [b"py-%d-%d" % (p, i)], AckPolicy.WRITTEN)
        assert r.base_offset == i, (p, i, r)
for p in range(3):
    got = [rec.payload for rec in client.fetch("routed-py", p, 0, max_wait_millis=0).records]
    assert got == [b"py-%d-0" % p, b"py-%d-1" % p], (p, got)
print("routes", ",".join(client.route_of("routed-py", p) for p in range(3)))
client.close()
`;

test('the Python Client sends each partition to its primary through a real cluster', async () => {
  const before = await Promise.all(kit.brokers.map((b) => proxiedRequests(b.httpPort)));
  const out = await runProgram('python3', ['-c', PYTHON_CLIENT, PYTHON_CLIENT_DIR, kit.brokers[2]!.address]);
  assert.equal(out.code, 0, out.text);
  const routes = /routes (\S+)/.exec(out.text)![1]!.split(',');
  assert.deepEqual(new Set(routes).size > 1, true, `spread over brokers: ${routes}`);
  assert.deepEqual(
    await Promise.all(kit.brokers.map((b) => proxiedRequests(b.httpPort))),
    before,
    'nothing proxied',
  );
});

const GO_CLIENT = `package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	booblik "github.com/youndie/booblik/clients/go"
)

func main() {
	ctx := context.Background()
	client, err := booblik.NewClient(ctx, []string{os.Args[1]}, booblik.ClientConfig{})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	if _, err := client.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(booblik.NewTopicSpec("routed-go", 3))}); err != nil {
		panic(err)
	}
	var routes []string
	for p := int32(0); p < 3; p++ {
		for i := int64(0); i < 2; i++ {
			r, err := client.Produce(ctx, "routed-go", p, [][]byte{[]byte(fmt.Sprintf("go-%d-%d", p, i))}, booblik.AckWritten)
			if err != nil {
				panic(err)
			}
			if r.BaseOffset != i {
				panic(fmt.Sprintf("partition %d record %d at offset %d", p, i, r.BaseOffset))
			}
		}
		got, err := client.Fetch(ctx, booblik.FetchRequest{Topic: "routed-go", Partition: p, Offset: 0})
		if err != nil {
			panic(err)
		}
		if len(got.Records) != 2 || string(got.Records[1].Payload) != fmt.Sprintf("go-%d-1", p) {
			panic(fmt.Sprintf("partition %d: %d records", p, len(got.Records)))
		}
		route, _ := client.Route("routed-go", p)
		routes = append(routes, route)
	}
	fmt.Println("routes", strings.Join(routes, ","))
}
`;

test('the Go Client sends each partition to its primary through a real cluster', async () => {
  const program = buildGoProgram(GO_CLIENT);
  try {
    const before = await Promise.all(kit.brokers.map((b) => proxiedRequests(b.httpPort)));
    const out = await runProgram(program.binary, [kit.brokers[1]!.address]);
    assert.equal(out.code, 0, out.text);
    const routes = /routes (\S+)/.exec(out.text)![1]!.split(',');
    assert.ok(new Set(routes).size > 1, `spread over brokers: ${routes}`);
    assert.deepEqual(
      await Promise.all(kit.brokers.map((b) => proxiedRequests(b.httpPort))),
      before,
      'nothing proxied',
    );
  } finally {
    program.remove();
  }
});
