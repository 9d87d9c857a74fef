"""booblik.aio.Client follows routes, as booblik.Client does (tests.test_client): fake cluster
brokers, and once the real single-node broker."""

import threading
import unittest
from unittest import mock

from booblik import ErrorCode
from booblik.aio import BrokerError, Client, TopicSpec, Upsert
from booblik.aio.connection import Connection
from tests.fakebroker import Reply
from tests.support import default_broker
from tests.test_client import QUICK, TIMEOUT, FakeCluster, data_requests, metadata_requests, payloads


class AioClientRoutesTest(unittest.IsolatedAsyncioTestCase):
    async def client(self, bootstrap, **options) -> Client:
        client = await Client.connect(bootstrap, TIMEOUT, **{**QUICK, **options})
        self.addAsyncCleanup(client.close)
        return client

    async def test_a_partition_routed_to_b_is_produced_to_and_fetched_from_b(self):
        c = FakeCluster(self, {"t": 2})
        c.routes[("t", 1)] = c.b.address
        client = await self.client(c.a.address)
        self.assertEqual((await client.produce("t", 1, [b"x", b"y"])).base_offset, 0)
        self.assertEqual(payloads(await client.fetch("t", 1, 0, max_wait_millis=0)), [(0, b"x"), (1, b"y")])
        self.assertEqual(data_requests(c.b), [(1, 3), (2, 3)])
        self.assertEqual(data_requests(c.a), [])

    async def test_not_primary_is_followed_to_the_route_in_the_answer_without_another_metadata(self):
        c = FakeCluster(self, {"t": 1})
        client = await self.client([c.a.address, c.b.address])
        await client.produce("t", 0, [b"first"])
        asked = len(metadata_requests(c.a)) + len(metadata_requests(c.b))
        c.routes[("t", 0)] = c.b.address
        self.assertEqual((await client.produce("t", 0, [b"second"])).base_offset, 1)
        self.assertEqual(len(metadata_requests(c.a)) + len(metadata_requests(c.b)), asked)
        self.assertEqual(data_requests(c.b), [(1, 3)])

    async def test_no_primary_twice_then_the_batch_is_acknowledged_after_metadata_each_time(self):
        c = FakeCluster(self, {"t": 1})
        c.a.no_primary_next = 2
        client = await self.client(c.a.address)
        self.assertEqual((await client.produce("t", 0, [b"r"])).base_offset, 0)
        self.assertEqual(c.a.payloads("t", 0), [b"r"])
        self.assertEqual(len(metadata_requests(c.a)), 3)

    async def test_no_primary_that_never_ends_is_raised_once_the_attempts_are_spent(self):
        c = FakeCluster(self, {"t": 1})
        c.routes[("t", 0)] = ""
        client = await self.client(c.a.address, route_attempts_max=3)
        with self.assertRaises(BrokerError) as caught:
            await client.produce("t", 0, [b"lost"])
        self.assertEqual(caught.exception.code, ErrorCode.NO_PRIMARY)
        self.assertEqual(len(metadata_requests(c.a)), 3)

    async def test_the_primary_dies_mid_fetch_and_metadata_from_the_other_broker_names_the_new_one(self):
        c = FakeCluster(self, {"t": 1})
        c.routes[("t", 0)] = c.b.address
        client = await self.client(c.a.address)
        await client.produce("t", 0, [b"a0"])

        def die(request):
            if request.api_key != 2:
                return None
            c.routes[("t", 0)] = c.a.address
            threading.Thread(target=c.b.close).start()
            return Reply(b"", close=True)

        c.b.respond = die
        consumer = client.consumer("t", 0, 0, max_wait_millis=0)
        self.assertEqual([(r.offset, bytes(r.payload)) for r in await consumer.poll()], [(0, b"a0")])
        self.assertEqual((await client.produce("t", 0, [b"a1"])).base_offset, 1)
        self.assertEqual(client.route_of("t", 0), c.a.address)

    async def test_metadata_after_apply_topics_carries_the_applys_revision(self):
        c = FakeCluster(self, {"t": 1})
        client = await self.client([c.a.address, c.b.address])
        revision = await client.apply_topics([Upsert(TopicSpec("t", 1))])
        await client.produce("t", 0, [b"x"])
        asked = metadata_requests(c.a) + metadata_requests(c.b)
        self.assertEqual([(r.api_version, r.fields["min_revision"]) for r in asked], [(3, revision)])


class AioClientSingleBrokerTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):  # outside the event loop: starting the broker blocks
        broker = default_broker()
        self.address = broker.__enter__()
        self.addCleanup(broker.__exit__, None, None, None)

    async def test_a_real_single_broker_gets_v3_and_everything_works(self):
        sent = []
        original = Connection._submit

        def recording(self, api_key, api_version, payload, answered=True, what="request"):
            sent.append((api_key, api_version))
            return original(self, api_key, api_version, payload, answered, what)

        with mock.patch.object(Connection, "_submit", recording):
            async with Client.connect(self.address, TIMEOUT) as client:
                topic = await client.topic("default")
                result = await topic.send(b"hello", key=b"k")
                fetched = await client.fetch("default", 0, result.base_offset, max_wait_millis=0)
                self.assertEqual([bytes(r.payload) for r in fetched.records], [b"hello"])
        versions = {key: {v for k, v in sent if k == key} for key in (1, 2, 3)}
        self.assertEqual(versions, {1: {3}, 2: {3}, 3: {3}})


if __name__ == "__main__":
    unittest.main()
