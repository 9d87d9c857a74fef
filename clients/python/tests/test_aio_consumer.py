"""booblik.aio fetching and consuming, against the fake broker."""

import asyncio
import unittest

from booblik.aio import BrokerError, Connection, CorruptRecordError, Record, RecordExceedsMaxBytesError
from tests.fakebroker import FakeBroker

TIMEOUT = 10.0


class AioFetchTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.connection = await Connection.connect(self.broker.address, timeout=TIMEOUT)

    async def asyncTearDown(self):
        await self.connection.close()

    async def test_records_come_back_in_order_exactly(self):
        payloads = [b"\x00", bytes(range(256)), b"third"]
        self.broker.append("orders", 1, *payloads)
        result = await self.connection.fetch("orders", 1, 0, max_wait_millis=0)
        self.assertEqual(result.records, [Record(i, p) for i, p in enumerate(payloads)])
        self.assertEqual(result.high_watermark, 3)

    async def test_fetch_is_v2_with_every_field_sent(self):
        self.broker.append("orders", 0, b"a")
        await self.connection.fetch("orders", 0, 0, max_bytes=4096, max_wait_millis=1234, min_bytes=7)
        (request,) = self.broker.requests
        self.assertEqual((request.api_key, request.api_version), (2, 2))
        self.assertEqual(
            request.fields,
            {
                "topic": "orders",
                "partition": 0,
                "offset": 0,
                "max_bytes": 4096,
                "max_wait_millis": 1234,
                "min_bytes": 7,
            },
        )

    async def test_at_the_high_watermark_is_empty_not_an_error(self):
        self.broker.append("orders", 0, b"a")
        result = await self.connection.fetch("orders", 0, 1, max_wait_millis=0)
        self.assertEqual((result.records, result.high_watermark), ([], 1))

    async def test_truncated_tail_is_dropped(self):
        self.broker.append("single", 0, b"1" * 100, b"2" * 100, b"3" * 100)
        result = await self.connection.fetch("single", 0, 0, max_bytes=150, max_wait_millis=0)
        self.assertEqual((result.records, result.next_offset), ([Record(0, b"1" * 100)], 1))

    async def test_truncation_inside_a_header_is_dropped(self):
        self.broker.append("single", 0, b"a", b"b")
        result = await self.connection.fetch("single", 0, 0, max_bytes=9 + 5, max_wait_millis=0)
        self.assertEqual(result.records, [Record(0, b"a")])

    async def test_record_larger_than_max_bytes_raises_with_both_numbers(self):
        self.broker.append("single", 0, b"z" * 500)
        with self.assertRaises(RecordExceedsMaxBytesError) as caught:
            await self.connection.fetch("single", 0, 0, max_bytes=100, max_wait_millis=0)
        self.assertEqual((caught.exception.record_size, caught.exception.max_bytes), (500, 100))

    async def test_corrupt_record_rejected(self):
        self.broker.append("single", 0, b"bitrot", crc=0x0BADF00D)
        with self.assertRaises(CorruptRecordError):
            await self.connection.fetch("single", 0, 0, max_wait_millis=0)
        self.assertFalse(self.connection.closed)

    async def test_truncation_not_taken_for_corruption(self):
        self.broker.append("single", 0, b"a" * 10, b"b" * 10)
        result = await self.connection.fetch("single", 0, 0, max_bytes=18 + 15, max_wait_millis=0)
        self.assertEqual(result.records, [Record(0, b"a" * 10)])

    async def test_offset_past_the_end_is_refused_and_the_connection_kept(self):
        with self.assertRaises(BrokerError) as caught:
            await self.connection.fetch("single", 0, 1000, max_wait_millis=0)
        self.assertEqual(caught.exception.name, "OFFSET_OUT_OF_RANGE")
        await self.connection.metadata()

    async def test_wait_not_shorter_than_the_timeout_refused(self):
        async with Connection.connect(self.broker.address, timeout=2.0) as connection:
            with self.assertRaisesRegex(ValueError, "not shorter than the connection timeout"):
                await connection.fetch("single", 0, 0, max_wait_millis=2000)
            with self.assertRaises(ValueError):
                connection.consumer("single", 0, 0)  # the default 5 s wait against a 2 s timeout
        self.assertEqual(self.broker.requests, [])

    async def test_long_fetch_is_answered_when_a_record_lands(self):
        fetch = asyncio.create_task(self.connection.fetch("single", 0, 0, max_wait_millis=4000))
        await asyncio.to_thread(self.broker.wait_for_fetch_waiting)
        self.broker.append("single", 0, b"woken")
        self.assertEqual((await fetch).records, [Record(0, b"woken")])


class AioConsumerTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.connection = await Connection.connect(self.broker.address, timeout=TIMEOUT)

    async def asyncTearDown(self):
        await self.connection.close()

    async def test_iterator_is_lazy(self):
        consumer = self.connection.consumer("single", 0, 0)
        self.broker.append("single", 0, b"first")
        self.assertEqual(self.broker.requests, [])
        self.assertEqual(await consumer.__anext__(), Record(0, b"first"))

    async def test_iteration_in_order_across_fetches_and_break_works(self):
        self.broker.append("single", 0, *[bytes([i]) * 50 for i in range(6)])
        consumer = self.connection.consumer("single", 0, 1, max_bytes=130)
        seen = []
        async for record in consumer:
            seen.append(record.offset)
            if record.offset == 5:
                break
        self.assertEqual((seen, consumer.position), ([1, 2, 3, 4, 5], 6))

    async def test_poll_is_one_fetch_and_empty_when_caught_up(self):
        self.broker.append("single", 0, b"a", b"b")
        consumer = self.connection.consumer("single", 0, 0, max_wait_millis=0)
        self.assertEqual([r.payload for r in await consumer.poll()], [b"a", b"b"])
        self.assertEqual(await consumer.poll(), [])
        self.assertEqual(consumer.position, 2)

    async def test_seek_moves_the_position_and_drops_what_was_fetched(self):
        self.broker.append("single", 0, b"a", b"b", b"c", b"d")
        consumer = self.connection.consumer("single", 0, 0)
        self.assertEqual((await consumer.__anext__()).payload, b"a")
        consumer.seek(3)
        self.assertEqual(await consumer.__anext__(), Record(3, b"d"))

    async def test_record_larger_than_max_bytes_stops_the_loop_instead_of_stalling(self):
        self.broker.append("single", 0, b"z" * 500)
        with self.assertRaises(RecordExceedsMaxBytesError):
            async for _ in self.connection.consumer("single", 0, 0, max_bytes=100):
                pass

    async def test_cancelling_the_task_stops_the_stream_and_keeps_the_connection(self):
        self.broker.append("single", 0, b"a")
        consumer = self.connection.consumer("single", 0, 0)
        seen = []

        async def read():
            async for record in consumer:
                seen.append(record.payload)

        task = asyncio.create_task(read())
        await asyncio.to_thread(self.broker.wait_for_fetch_waiting)  # caught up, in a long fetch
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertEqual((seen, consumer.position), ([b"a"], 1))
        self.broker.append("single", 0, b"b")  # answers the abandoned fetch: read and dropped
        self.assertEqual([t.name for t in await self.connection.metadata()], ["orders", "single"])
        self.assertEqual(await consumer.poll(), [Record(1, b"b")])


if __name__ == "__main__":
    unittest.main()
