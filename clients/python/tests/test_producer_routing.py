"""Both Producers: a key picks the partition as every client does, an empty record fails alone, an
unknown topic is named, and the defaults are the TypeScript client's."""

import asyncio
import os
import re
import unittest

from booblik import BrokerError, Connection, Producer, ProducerConfig, aio
from tests.fakebroker import FakeBroker
from tests.support import load_vectors

TIMEOUT = 5.0
LONG_LINGER = 60.0  # a batch that went out did so because of a flush
TS_LIMITS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "packages", "client", "src", "limits.ts"
)


def vector_sends():
    """(name, key, partition of 3) for every partitioner vector."""
    _, rows = load_vectors("partitioner-fnv1a.tsv")
    return [(row["name"], bytes.fromhex(row["keyHex"]), int(row["p3"])) for row in rows]


class ProducerRoutingTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker({"orders": 3, "default": 1})
        self.addCleanup(self.broker.close)
        connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.producer = Producer(connection, ProducerConfig(linger=LONG_LINGER))
        self.addCleanup(self.producer.close)

    def test_empty_record_is_refused_at_send_and_fails_nothing_else(self):
        first = self.producer.send("default", b"a", partition=0)
        with self.assertRaisesRegex(ValueError, "payload: empty"):
            self.producer.send("default", b"", partition=0)
        with self.assertRaisesRegex(ValueError, "payload: empty"):
            self.producer.send("default", b"", key=b"k")
        last = self.producer.send("default", b"c", partition=0)
        self.producer.flush(TIMEOUT)
        self.assertEqual((first.result(), last.result()), (0, 1))
        self.assertEqual(self.broker.payloads("default", 0), [b"a", b"c"])

    def test_key_routes_to_the_partition_the_fnv1a_vectors_name(self):
        sends = vector_sends()
        futures = [self.producer.send("orders", name.encode(), key=key) for name, key, _ in sends]
        self.producer.flush(TIMEOUT)
        for (name, _, partition), future in zip(sends, futures):
            with self.subTest(name):
                self.assertEqual(self.broker.payloads("orders", partition)[future.result()], name.encode())
        metadata = [r for r in self.broker.requests if r.api_key == 3]
        self.assertEqual(len(metadata), 1, "the topic's partitions are asked for once")

    def test_no_key_and_no_partition_takes_the_partitions_in_turn(self):
        futures = [self.producer.send("orders", bytes([n])) for n in range(6)]
        self.producer.flush(TIMEOUT)
        self.assertEqual([f.result() for f in futures], [0, 0, 0, 1, 1, 1])
        self.assertEqual(
            [self.broker.payloads("orders", p) for p in range(3)], [[b"\0", b"\3"], [b"\1", b"\4"], [b"\2", b"\5"]]
        )

    def test_unknown_topic_is_refused_at_send_naming_it(self):
        with self.assertRaises(BrokerError) as caught:
            self.producer.send("no-such-topic", b"x", key=b"k")
        self.assertIn("no-such-topic", str(caught.exception))
        kept = self.producer.send("default", b"x")
        self.producer.flush(TIMEOUT)
        self.assertEqual(kept.result(), 0)


class AioProducerRoutingTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.broker = FakeBroker({"orders": 3, "default": 1})
        self.addCleanup(self.broker.close)
        connection = await aio.Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.producer = aio.Producer(connection, aio.ProducerConfig(linger=LONG_LINGER))

    async def asyncTearDown(self):
        await self.producer.close()

    async def test_empty_record_is_refused_at_send_and_fails_nothing_else(self):
        first = self.producer.send("default", b"a", partition=0)
        with self.assertRaisesRegex(ValueError, "payload: empty"):
            self.producer.send("default", b"", partition=0)
        with self.assertRaisesRegex(ValueError, "payload: empty"):
            self.producer.send("default", b"", key=b"k")
        last = self.producer.send("default", b"c", partition=0)
        await self.producer.flush()
        self.assertEqual((first.result(), last.result()), (0, 1))
        self.assertEqual(self.broker.payloads("default", 0), [b"a", b"c"])

    async def test_key_routes_to_the_partition_the_fnv1a_vectors_name(self):
        sends = vector_sends()
        futures = [self.producer.send("orders", name.encode(), key=key) for name, key, _ in sends]
        await self.producer.flush()
        for (name, _, partition), future in zip(sends, futures):
            with self.subTest(name):
                self.assertEqual(self.broker.payloads("orders", partition)[future.result()], name.encode())
        metadata = [r for r in self.broker.requests if r.api_key == 3]
        self.assertEqual(len(metadata), 1, "the topic's partitions are asked for once")

    async def test_records_behind_a_topic_lookup_keep_their_order(self):
        # The first send waits for the partitions of "orders"; one to an explicit partition of the
        # same topic, sent after it, must not overtake it.
        _, key, partition = vector_sends()[0]
        waited = self.producer.send("orders", b"first", key=key)
        direct = self.producer.send("orders", b"second", partition=partition)
        await self.producer.flush()
        self.assertEqual((waited.result(), direct.result()), (0, 1))
        self.assertEqual(self.broker.payloads("orders", partition), [b"first", b"second"])

    async def test_unknown_topic_fails_the_records_that_needed_it_naming_it(self):
        doomed = self.producer.send("no-such-topic", b"x", key=b"k")
        kept = self.producer.send("default", b"x", partition=0)
        await self.producer.flush()
        with self.assertRaises(BrokerError) as caught:
            await asyncio.wait_for(doomed, TIMEOUT)
        self.assertIn("no-such-topic", str(caught.exception))
        self.assertEqual(kept.result(), 0)


class SameDefaultsTest(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(TS_LIMITS), "packages/client is not beside this client")
    def test_batch_size_and_linger_are_the_typescript_clients(self):
        with open(TS_LIMITS, encoding="utf-8") as file:
            text = file.read()
        linger_ms = int(re.search(r"DEFAULT_LINGER_MS = (\d+)", text).group(1))
        batch = int(re.search(r"DEFAULT_MAX_BATCH_RECORDS = (\d+)", text).group(1))
        config = ProducerConfig()
        self.assertEqual((config.linger * 1000, config.max_batch_size), (linger_ms, batch))


if __name__ == "__main__":
    unittest.main()
