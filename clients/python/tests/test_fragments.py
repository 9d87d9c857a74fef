"""list_fragments (sync, asyncio and the routed Client): refused by a broker that predates it (the
fake broker), and against the real broker a topic with a file:// store whose rolled segments reach
the store while the active one stays local."""

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
import unittest

from booblik import (
    BrokerError,
    Client,
    Connection,
    ErrorCode,
    Fragment,
    FragmentLocation,
    PartitionFragments,
    TopicSpec,
    Upsert,
    aio,
)
from tests.fakebroker import UNSUPPORTED_VERSION, FakeBroker, Reply, response_frame
from tests.support import BROKER_ENTRY, NODE, default_broker

TIMEOUT = 5.0
UPLOAD_WAIT_S = 20.0  # the most the test waits for a rolled segment to reach the store
SEGMENT_BYTES = 1024
RECORD = b"r" * 92  # 100 bytes stored with its header: ten to a segment
RECORDS = 35  # three full segments and an active one


def predates_list_fragments(request):
    """Answer LIST_FRAGMENTS as a broker from before it: UNSUPPORTED_VERSION, as v1 requires."""
    if request.api_key == 7:
        return Reply(response_frame(request.correlation_id, UNSUPPORTED_VERSION))
    return None


class OldBrokerTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker({"orders": 1}, respond=predates_list_fragments)
        self.addCleanup(self.broker.close)

    def test_a_broker_that_predates_the_call_refuses_it_unsupported_version_and_the_connection_stays_usable(self):
        with Connection.connect(self.broker.address, timeout=TIMEOUT) as connection:
            with self.assertRaises(BrokerError) as caught:
                connection.list_fragments("orders", 0)
            self.assertEqual(caught.exception.code, ErrorCode.UNSUPPORTED_VERSION)
            self.assertIn("LIST_FRAGMENTS orders/0", str(caught.exception))
            self.assertEqual(connection.metadata("orders")[0].name, "orders")
        (request,) = [r for r in self.broker.requests if r.api_key == 7]
        self.assertEqual((request.api_version, request.raw[12:].hex()), (1, "00066f726465727300000000"))

    def test_asyncio_the_same_refusal(self):
        async def scenario():
            async with aio.Connection.connect(self.broker.address, timeout=TIMEOUT) as connection:
                with self.assertRaises(BrokerError) as caught:
                    await connection.list_fragments("orders")
                self.assertEqual(caught.exception.code, ErrorCode.UNSUPPORTED_VERSION)

        asyncio.run(scenario())


class RoutedClientTest(unittest.TestCase):
    def test_a_partitions_fragments_are_asked_of_its_primary(self):
        routes: dict = {}
        a = FakeBroker({"t": 2}, routes=routes)
        self.addCleanup(a.close)
        b = FakeBroker(share=a)
        self.addCleanup(b.close)
        routes.update({("t", 0): a.address, ("t", 1): b.address})
        b.logs[("t", 1)].append(b"\0\0\0\3crc" + b"abc")  # one stored record of 3 bytes
        with Client.connect(a.address, TIMEOUT) as client:
            listed = client.list_fragments("t", 1)
        self.assertEqual(listed, [PartitionFragments(1, 0, 1, (Fragment(0, 1, 10, FragmentLocation.LOCAL, -1),))])
        asked = ([r.api_key for r in a.requests if r.api_key == 7], [r.api_key for r in b.requests])
        self.assertEqual(asked, ([], [6, 7]))  # B: API_VERSIONS, then LIST_FRAGMENTS


@unittest.skipUnless(NODE and os.path.exists(BROKER_ENTRY), "the broker is not built (npx tsc -b at the root)")
class RealBrokerFragmentsTest(unittest.TestCase):
    """A two-partition topic with a file:// store and 1 KiB segments; partition 0 rolls three times."""

    @classmethod
    def setUpClass(cls):
        cls.stack = contextlib.ExitStack()
        cls.address = cls.stack.enter_context(default_broker())
        store_dir = tempfile.mkdtemp(prefix="booblik-py-store-")
        cls.stack.callback(shutil.rmtree, store_dir, ignore_errors=True)
        cls.topic = f"py-{os.getpid()}-fragments"
        cls.started_ms = int(time.time() * 1000)
        with Connection.connect(cls.address, timeout=TIMEOUT) as connection:
            spec = TopicSpec(cls.topic, 2, segment_bytes=SEGMENT_BYTES, store_url=f"file://{store_dir}", revision=0)
            connection.apply_topics([Upsert(spec)])
            for _ in range(RECORDS):  # one record a request: each segment fills to exactly ten
                connection.produce(cls.topic, 0, [RECORD])
            cls.fragments = cls.wait_for_store(connection)

    @classmethod
    def tearDownClass(cls):
        cls.stack.close()

    @classmethod
    def wait_for_store(cls, connection):
        """Partition 0's fragments once every rolled segment is in the store, polled up to UPLOAD_WAIT_S."""
        deadline = time.monotonic() + UPLOAD_WAIT_S
        while True:
            (partition,) = connection.list_fragments(cls.topic, 0)
            rolled = partition.fragments[:-1]
            if rolled and all(f.in_store for f in rolled):
                return partition
            if time.monotonic() > deadline:
                raise AssertionError(f"rolled segments not in the store after {UPLOAD_WAIT_S} s: {partition}")
            time.sleep(0.05)

    def setUp(self):
        self.connection = Connection.connect(self.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_rolled_segments_reach_the_store_and_the_active_one_stays_local(self):
        partition = self.fragments
        self.assertEqual((partition.partition, partition.log_start_offset, partition.high_watermark), (0, 0, RECORDS))
        *rolled, active = partition.fragments
        self.assertEqual([(f.first_offset, f.last_offset) for f in rolled], [(0, 9), (10, 19), (20, 29)])
        self.assertEqual((active.first_offset, active.last_offset), (30, RECORDS - 1))
        self.assertEqual((active.location, active.persisted_at), (FragmentLocation.LOCAL, None))
        now_ms = int(time.time() * 1000)
        for fragment in rolled:
            self.assertIn(fragment.location, (FragmentLocation.STORE, FragmentLocation.BOTH))
            self.assertEqual(fragment.size_bytes, 10 * len(RECORD) + 10 * 8)
            self.assertTrue(self.started_ms <= fragment.persisted_millis <= now_ms, fragment)

    def test_every_partition_is_listed_by_id_and_an_empty_one_has_one_empty_local_segment(self):
        listed = self.connection.list_fragments(self.topic)
        self.assertEqual([p.partition for p in listed], [0, 1])
        (empty,) = listed[1].fragments
        self.assertEqual((empty.base_offset, empty.end_offset, empty.location), (0, 0, FragmentLocation.LOCAL))

    def test_an_unknown_topic_or_partition_is_refused_by_name_and_the_connection_stays_usable(self):
        for topic, partition in (("py-no-such-topic", None), (self.topic, 2)):
            with self.assertRaises(BrokerError) as caught:
                self.connection.list_fragments(topic, partition)
            self.assertEqual(caught.exception.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            self.assertIn(topic, str(caught.exception))
        self.assertEqual(len(self.connection.list_fragments(self.topic, 1)), 1)

    def test_the_routed_client_and_asyncio_see_the_same_fragments(self):
        with Client.connect(self.address, timeout=TIMEOUT) as client:
            self.assertEqual(client.list_fragments(self.topic, 0)[0].fragments[:3], self.fragments.fragments[:3])
            self.assertEqual(len(client.list_fragments(self.topic)), 2)

        async def scenario():
            async with aio.Connection.connect(self.address, timeout=TIMEOUT) as connection:
                (partition,) = await connection.list_fragments(self.topic, 0)
                self.assertEqual(partition.fragments[:3], self.fragments.fragments[:3])
            async with aio.Client.connect(self.address, timeout=TIMEOUT) as client:
                with self.assertRaises(BrokerError) as caught:
                    await client.list_fragments("py-no-such-topic", 0)
                self.assertEqual(caught.exception.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

        asyncio.run(scenario())


if __name__ == "__main__":
    unittest.main()
