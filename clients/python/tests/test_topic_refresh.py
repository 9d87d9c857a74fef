"""A Connection asks API_VERSIONS once and uses METADATA v2 where the broker has it; a Topic sees
partitions added at runtime (once its list is old, on refresh(), and after a send is refused
UNKNOWN_TOPIC_OR_PARTITION). Sync and asyncio, against the fake broker and the real one."""

import unittest

from booblik import Connection, Delete, TopicSpec, Upsert, aio
from booblik.connection import Topic
from tests.fakebroker import FakeBroker
from tests.support import default_broker

TIMEOUT = 5.0
API_VERSIONS, METADATA = 6, 3


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def asked(broker, *api_keys) -> list:
    """(api key, version) of the requests of those APIs, in order."""
    return [(r.api_key, r.api_version) for r in broker.requests if r.api_key in api_keys]


def grow(connection: Connection, topic: str, partitions: int) -> None:
    connection.apply_topics([Upsert(TopicSpec(topic, partitions))])


def landed(broker, topic: str) -> dict:
    """partition -> how many records the fake holds there."""
    return {p: len(broker.payloads(topic, p)) for p in range(broker.topics[topic])}


class VersionsTest(unittest.TestCase):
    def test_api_versions_is_asked_once_and_metadata_goes_as_v2_where_the_broker_has_it(self):
        broker = FakeBroker({"t": 2}, routes={})  # speaks API_VERSIONS and METADATA up to v4
        self.addCleanup(broker.close)
        with Connection.connect(broker.address, TIMEOUT) as connection:
            self.assertEqual([p.partition for p in connection.metadata("t")[0].partitions], [0, 1])
            connection.topic("t")
        self.assertEqual(asked(broker, API_VERSIONS, METADATA), [(6, 1), (3, 2), (3, 2)])

    def test_a_broker_that_refuses_api_versions_gets_metadata_v1(self):
        broker = FakeBroker({"t": 2})  # predates the additions: API_VERSIONS is UNSUPPORTED_VERSION
        self.addCleanup(broker.close)
        with Connection.connect(broker.address, TIMEOUT) as connection:
            self.assertEqual(len(connection.metadata("t")[0].partitions), 2)
            self.assertEqual(connection.versions()[METADATA], 1)
            connection.metadata("t")
        self.assertEqual(asked(broker, API_VERSIONS, METADATA), [(6, 1), (3, 1), (3, 1)])


class TopicRefreshTest(unittest.TestCase):
    def setUp(self) -> None:
        self.broker = FakeBroker({"t": 2}, routes={})
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_a_topic_sends_to_partitions_added_at_runtime_once_its_list_is_old(self):
        clock = ManualClock()
        topic = Topic(self.connection, "t", [0, 1], metadata_max_age=5.0, clock=clock)
        grow(self.connection, "t", 4)
        for _ in range(4):
            topic.send(b"young")  # the list is young: the two partitions it knows
        self.assertEqual(landed(self.broker, "t"), {0: 2, 1: 2, 2: 0, 3: 0})
        clock.now = 5.0
        for _ in range(4):
            topic.send(b"old")
        self.assertEqual(topic.partitions, (0, 1, 2, 3))
        self.assertEqual(landed(self.broker, "t"), {0: 3, 1: 3, 2: 1, 3: 1})

    def test_refresh_reads_the_partitions_now(self):
        topic = self.connection.topic("t", metadata_max_age=3600)
        grow(self.connection, "t", 3)
        self.assertEqual(topic.partitions, (0, 1))
        topic.refresh()
        self.assertEqual(topic.partitions, (0, 1, 2))

    def test_after_a_send_is_refused_unknown_partition_the_next_send_reads_the_list_again(self):
        topic = self.connection.topic("t", metadata_max_age=3600)
        # The topic is deleted and made again with one partition: partition 1 is gone.
        self.connection.apply_topics([Delete("t")])
        self.connection.apply_topics([Upsert(TopicSpec("t", 1))])
        topic.partition_for()  # the round robin now points at partition 1
        with self.assertRaises(Exception) as refused:
            topic.send(b"lost")
        self.assertEqual(refused.exception.name, "UNKNOWN_TOPIC_OR_PARTITION")
        self.assertEqual(topic.send(b"next").base_offset, 0)
        self.assertEqual(topic.partitions, (0,))
        self.assertEqual(self.broker.payloads("t", 0), [b"next"])


class AioTopicRefreshTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.broker = FakeBroker({"t": 2}, routes={})
        self.addCleanup(self.broker.close)
        self.connection = await aio.Connection.connect(self.broker.address, TIMEOUT)
        self.addAsyncCleanup(self.connection.close)

    async def test_api_versions_is_asked_once_and_metadata_goes_as_v2(self):
        await self.connection.metadata("t")
        await self.connection.topic("t")
        self.assertEqual(asked(self.broker, API_VERSIONS, METADATA), [(6, 1), (3, 2), (3, 2)])

    async def test_a_topic_sends_to_partitions_added_at_runtime_once_its_list_is_old(self):
        clock = ManualClock()
        topic = aio.Topic(self.connection, "t", [0, 1], metadata_max_age=5.0, clock=clock)
        await self.connection.apply_topics([Upsert(TopicSpec("t", 4))])
        clock.now = 5.0
        for _ in range(4):
            await topic.send(b"old")
        self.assertEqual(topic.partitions, (0, 1, 2, 3))
        self.assertEqual(landed(self.broker, "t"), {0: 1, 1: 1, 2: 1, 3: 1})

    async def test_refresh_and_a_refusal_read_the_list_again(self):
        topic = await self.connection.topic("t", metadata_max_age=3600)
        await self.connection.apply_topics([Upsert(TopicSpec("t", 3))])
        await topic.refresh()
        self.assertEqual(topic.partitions, (0, 1, 2))
        await self.connection.apply_topics([Delete("t")])
        await self.connection.apply_topics([Upsert(TopicSpec("t", 1))])
        topic.partition_for()
        with self.assertRaises(Exception) as refused:
            await topic.send(b"lost")  # to partition 1, gone
        self.assertEqual(refused.exception.name, "UNKNOWN_TOPIC_OR_PARTITION")
        self.assertEqual((await topic.send(b"next")).base_offset, 0)
        self.assertEqual(topic.partitions, (0,))


class RealBrokerTest(unittest.TestCase):
    def test_a_topic_sends_to_partitions_added_on_a_real_broker(self):
        with default_broker() as address, Connection.connect(address, TIMEOUT) as connection:
            self.assertGreaterEqual(connection.versions()[METADATA], 2)
            connection.apply_topics([Upsert(TopicSpec("grown", 1))])
            topic = connection.topic("grown", metadata_max_age=0)  # read again before every send
            topic.send(b"before")  # round robin, turn 0: partition 0
            grow(connection, "grown", 3)
            for _ in range(3):
                topic.send(b"after")  # turns 1, 2, 3: partitions 1, 2, 0
            self.assertEqual(topic.partitions, (0, 1, 2))
            self.assertEqual([p.high_watermark for p in connection.metadata("grown")[0].partitions], [2, 1, 1])


class AioRealBrokerTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_topic_sends_to_partitions_added_on_a_real_broker(self):
        with default_broker() as address:
            async with aio.Connection.connect(address, TIMEOUT) as connection:
                self.assertGreaterEqual((await connection.versions())[METADATA], 2)
                await connection.apply_topics([Upsert(TopicSpec("grown", 1))])
                topic = await connection.topic("grown", metadata_max_age=3600)
                await connection.apply_topics([Upsert(TopicSpec("grown", 3))])
                await topic.refresh()
                for _ in range(3):
                    await topic.send(b"after")
                partitions = (await connection.metadata("grown"))[0].partitions
                self.assertEqual([p.high_watermark for p in partitions], [1, 1, 1])


if __name__ == "__main__":
    unittest.main()
