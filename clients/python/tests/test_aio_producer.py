"""booblik.aio's batching Producer against the fake broker."""

import asyncio
import unittest

from booblik.aio import (
    OFFSET_UNKNOWN,
    AckPolicy,
    BrokerError,
    Connection,
    ConnectionClosedError,
    Producer,
    ProducerClosedError,
    ProducerConfig,
)
from tests.fakebroker import FakeBroker, Reply

TIMEOUT = 5.0
LONG_LINGER = 60.0


class AioProducerTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.producers = []

    async def asyncTearDown(self):
        for producer in self.producers:
            await producer.close()

    async def producer(self, **config) -> Producer:
        connection = await Connection.connect(self.broker.address, timeout=TIMEOUT)
        producer = Producer(connection, ProducerConfig(**config))
        self.producers.append(producer)
        return producer

    def produce_requests(self):
        return [r for r in self.broker.requests if r.api_key == 1]

    async def test_loses_nothing_across_linger_windows(self):
        producer = await self.producer(linger=0.001, max_batch_size=7)
        futures = []
        for burst in range(10):
            futures += [producer.send("single", f"{burst}-{i}".encode(), partition=0) for i in range(25)]
            await futures[-1]
        self.assertEqual(await asyncio.gather(*futures), list(range(250)))
        self.assertEqual(self.broker.payloads("single", 0), [f"{b}-{i}".encode() for b in range(10) for i in range(25)])
        self.assertTrue(all(len(r.fields["records"]) <= 7 for r in self.produce_requests()))

    async def test_batch_goes_out_after_its_linger_without_a_flush(self):
        producer = await self.producer(linger=0.01)
        self.assertEqual(await asyncio.wait_for(producer.send("single", b"alone", partition=0), TIMEOUT), 0)

    async def test_full_batch_flushes_at_once(self):
        producer = await self.producer(linger=LONG_LINGER, max_batch_size=3)
        futures = [producer.send("single", bytes([i]), partition=0) for i in range(4)]
        self.assertEqual(await asyncio.wait_for(asyncio.gather(*futures[:3]), TIMEOUT), [0, 1, 2])
        self.assertFalse(futures[3].done())
        self.assertEqual([len(r.fields["records"]) for r in self.produce_requests()], [3])
        await producer.flush()
        self.assertEqual(futures[3].result(), 3)

    async def test_partitions_batch_separately(self):
        producer = await self.producer(linger=LONG_LINGER)
        sends = [(0, b"a"), (1, b"b"), (0, b"c"), (2, b"d"), (1, b"e")]
        futures = [producer.send("orders", payload, partition=p) for p, payload in sends]
        await producer.flush()
        self.assertEqual([f.result() for f in futures], [0, 0, 1, 0, 1])
        batches = {r.fields["partition"]: r.fields["records"] for r in self.produce_requests()}
        self.assertEqual(batches, {0: [b"a", b"c"], 1: [b"b", b"e"], 2: [b"d"]})

    async def test_close_flushes(self):
        producer = await self.producer(linger=LONG_LINGER)
        futures = [producer.send("single", bytes([i]), partition=0) for i in range(5)]
        await producer.close()
        self.assertEqual([f.result() for f in futures], [0, 1, 2, 3, 4])
        self.assertTrue(producer.connection.closed)

    async def test_async_with_closes_and_flushes(self):
        connection = await Connection.connect(self.broker.address, timeout=TIMEOUT)
        async with Producer(connection, ProducerConfig(linger=LONG_LINGER)) as producer:
            future = producer.send("single", b"x", partition=0)
        self.assertEqual(future.result(), 0)

    async def test_ack_none_gives_offset_unknown(self):
        producer = await self.producer(linger=LONG_LINGER, ack=AckPolicy.NONE)
        futures = [producer.send("single", b"n1", partition=0), producer.send("single", b"n2", partition=0)]
        await producer.flush()
        self.assertEqual([f.result() for f in futures], [OFFSET_UNKNOWN, OFFSET_UNKNOWN])
        await asyncio.to_thread(self.broker.wait_for_requests, 1)
        self.assertEqual(self.broker.payloads("single", 0), [b"n1", b"n2"])

    async def test_broker_refusal_reaches_every_future_of_the_batch(self):
        producer = await self.producer(linger=LONG_LINGER)
        doomed = [producer.send("orders", bytes([i]), partition=9) for i in range(3)]
        fine = producer.send("orders", b"ok", partition=0)
        await producer.flush()
        for future in doomed:
            self.assertIsInstance(future.exception(), BrokerError)
            self.assertEqual(future.exception().name, "UNKNOWN_TOPIC_OR_PARTITION")
        self.assertEqual(fine.result(), 0)
        after = producer.send("orders", b"after", partition=0)
        await producer.flush()
        self.assertEqual(after.result(), 1)

    async def test_connection_failure_reaches_every_future_and_later_sends_fail(self):
        self.broker.respond = lambda r: Reply(b"\x00\x00", close=True)
        producer = await self.producer(linger=LONG_LINGER)
        futures = [producer.send("orders", b"x", partition=p) for p in (0, 1, 2, 0)]
        await producer.flush()
        for future in futures:
            self.assertIsInstance(future.exception(), ConnectionClosedError)
        # The producer learns of it from the connection at its next batch at the latest.
        with self.assertRaises((ProducerClosedError, ConnectionClosedError)):
            await producer.send("orders", b"y", partition=0)

    async def test_record_lingering_when_the_broker_goes_away_fails_rather_than_hangs(self):
        producer = await self.producer(linger=0.2)
        future = producer.send("single", b"orphan", partition=0)
        self.broker.close()
        with self.assertRaises(ConnectionClosedError):
            await asyncio.wait_for(future, TIMEOUT)

    async def test_send_after_close_fails(self):
        producer = await self.producer()
        await producer.close()
        with self.assertRaises(ProducerClosedError):
            producer.send("single", b"late", partition=0)

    async def test_future_cancelled_before_sending_is_not_sent(self):
        producer = await self.producer(linger=LONG_LINGER)
        kept = producer.send("single", b"kept", partition=0)
        producer.send("single", b"dropped", partition=0).cancel()
        await producer.flush()
        self.assertEqual(kept.result(), 0)
        self.assertEqual(self.broker.payloads("single", 0), [b"kept"])


if __name__ == "__main__":
    unittest.main()
