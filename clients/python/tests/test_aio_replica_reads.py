"""booblik.aio.Client with prefer_zone reads from in-sync replicas in that zone, as booblik.Client
does (tests.test_replica_reads): fake cluster brokers, and once the real single-node broker."""

import os
import unittest
from unittest import mock

from booblik.aio import Client, ReplicaState, RouteV2
from booblik.aio.connection import Connection
from tests.fakebroker import Reply
from tests.support import BROKER_ENTRY, NODE, default_broker
from tests.test_client import QUICK, TIMEOUT
from tests.test_replica_reads import (
    IN_SYNC,
    LIVE,
    READABLE,
    ZonedCluster,
    offsets,
)


class AioReplicaReadsTest(unittest.IsolatedAsyncioTestCase):
    async def client(self, c: ZonedCluster, **options) -> Client:
        client = await Client.connect(c.a.address, TIMEOUT, **{**QUICK, **options})
        self.addAsyncCleanup(client.close)
        return client

    async def test_a_consumer_preferring_z2_reads_from_the_z2_in_sync_replica_not_the_primary(self):
        c = ZonedCluster(self)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE), ("c", "z3", READABLE))
        client = await self.client(c, prefer_zone="z2")
        await client.produce("t", 0, [b"x", b"y"])
        consumer = client.consumer("t", 0, 0, max_wait_millis=0)
        self.assertEqual([(r.offset, bytes(r.payload)) for r in await consumer.poll()], [(0, b"x"), (1, b"y")])
        self.assertEqual(c.served(), [("b", 4)])
        self.assertEqual(c.versions_sent(3), {4})
        (topic,) = (await client.metadata_with_routes("t")).topics
        self.assertEqual([r.zone for r in topic.partitions[0].route_v2.replicas], ["z1", "z2", "z3"])

    async def test_a_replica_in_the_zone_not_in_sync_or_not_live_is_never_picked(self):
        c = ZonedCluster(self, "abcd")
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE), ("c", "z2", IN_SYNC), ("d", "z2", READABLE))
        client = await self.client(c, prefer_zone="z2")
        for _ in range(3):
            self.assertEqual(offsets(await client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served(), [("d", 4)] * 3)

    async def test_no_replica_in_the_zone_means_the_primary(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = await self.client(c, prefer_zone="z9")
        await client.fetch("t", 0, 0, max_wait_millis=0)
        self.assertEqual(c.served(), [("a", 4)])

    async def test_not_primary_from_the_replica_is_served_by_the_primary_and_the_next_pick_uses_the_refreshed_route(
        self,
    ):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r0", b"r1")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE), ("c", "z2", LIVE))
        client = await self.client(c, prefer_zone="z2")
        await client.metadata_with_routes("t")
        asked = c.metadata_count()
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE), ("c", "z2", READABLE))
        self.assertEqual(offsets(await client.fetch("t", 0, 0, max_wait_millis=0)), [0, 1])
        self.assertEqual(c.served(), [("a", 4)])
        self.assertEqual(c.metadata_count(), asked)
        self.assertEqual(offsets(await client.fetch("t", 0, 1, max_wait_millis=0)), [1])
        self.assertEqual(c.served(), [("a", 4), ("c", 4)])
        self.assertEqual(c.metadata_count(), asked + 1)

    async def test_a_lost_connection_to_the_replica_is_served_by_the_primary(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        c.b.respond = lambda request: Reply(b"", close=True) if request.api_key == 2 else None
        client = await self.client(c, prefer_zone="z2")
        self.assertEqual(offsets(await client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual([name for name, _ in c.served()][-1], "a")

    async def test_a_replica_whose_high_watermark_trails_one_seen_before_does_not_take_it_back(self):
        c = ZonedCluster(self)
        c.a.append("t", 0, *[b"r"] * 5)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = await self.client(c, prefer_zone="z2")
        await client.metadata_with_routes("t")
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE))
        self.assertEqual((await client.fetch("t", 0, 0, max_wait_millis=0)).high_watermark, 5)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        c.b.commit[("t", 0)] = 3
        result = await client.fetch("t", 0, 5, max_wait_millis=0)
        self.assertEqual(c.served(), [("a", 4), ("b", 4)])
        self.assertEqual(c.a.served[-1].high_watermark, 3)
        self.assertEqual((result.high_watermark, result.records), (5, []))

    async def test_a_cluster_without_metadata_v4_is_asked_v3_and_read_from_primaries(self):
        c = ZonedCluster(self, old="abc")
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = await self.client(c, prefer_zone="z2")
        self.assertEqual(offsets(await client.fetch("t", 0, 0, max_wait_millis=0)), [0])
        self.assertEqual(c.served(), [("a", 3)])
        self.assertEqual(c.versions_sent(3), {3})

    async def test_a_replica_without_fetch_v4_is_passed_over_for_v3_to_the_primary(self):
        c = ZonedCluster(self, old="b")
        c.a.append("t", 0, b"r")
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = await self.client(c, prefer_zone="z2")
        await client.fetch("t", 0, 0, max_wait_millis=0)
        self.assertEqual(c.served(), [("a", 3)])

    async def test_without_prefer_zone_nothing_sends_v4(self):
        c = ZonedCluster(self)
        c.place(("a", "z1", READABLE), ("b", "z2", READABLE))
        client = await self.client(c)
        await client.produce("t", 0, [b"x"])
        await client.metadata_with_routes("t")
        await client.list_topics()
        self.assertEqual(len(await client.consumer("t", 0, 0, max_wait_millis=0).poll()), 1)
        self.assertEqual(c.served(), [("a", 3)])
        self.assertEqual((c.versions_sent(3), c.versions_sent(2), c.versions_sent(5)), ({3}, {3}, {1}))

    async def test_list_topics_with_replicas_shows_each_partitions_replicas(self):
        c = ZonedCluster(self)
        c.place(("a", "z1", READABLE), ("b", "z2", LIVE))
        client = await self.client(c)
        (topic,) = (await client.list_topics("", replicas=True)).topics
        self.assertEqual(
            [(r.member, r.zone, r.flags) for r in topic.routes_v2[0].replicas], [("a", "z1", 3), ("b", "z2", 2)]
        )


@unittest.skipUnless(NODE and os.path.exists(BROKER_ENTRY), "the broker is not built (npx tsc -b at the root)")
class AioReplicaReadsSingleBrokerTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):  # outside the event loop: starting the broker blocks
        broker = default_broker()
        self.address = broker.__enter__()
        self.addCleanup(broker.__exit__, None, None, None)

    async def test_a_real_single_broker_with_prefer_zone_routes_to_itself_and_serves_v4(self):
        sent = []
        original = Connection._submit

        def recording(self, api_key, api_version, payload, answered=True, what="request"):
            sent.append((api_key, api_version))
            return original(self, api_key, api_version, payload, answered, what)

        with mock.patch.object(Connection, "_submit", recording):
            async with Client.connect(self.address, TIMEOUT, prefer_zone="z2") as client:
                (topic,) = (await client.metadata_with_routes("default")).topics
                single = RouteV2(0, self.address, (ReplicaState("", self.address, "", 3, 0, 0),))
                self.assertEqual(topic.partitions[0].route_v2, single)
                base = (await client.produce("default", 0, [b"one", b"two"])).base_offset
                fetched = await client.fetch("default", 0, base, max_wait_millis=0)
                self.assertEqual([bytes(r.payload) for r in fetched.records], [b"one", b"two"])
                self.assertEqual(fetched.high_watermark, base + 2)
        self.assertEqual({v for k, v in sent if k in (2, 3)}, {4})


if __name__ == "__main__":
    unittest.main()
