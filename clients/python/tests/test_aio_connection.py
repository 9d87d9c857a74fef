"""booblik.aio's Connection and Topic against the fake broker, which decodes what was sent."""

import asyncio
import struct
import unittest

from booblik.aio import AckPolicy, BrokerError, Connection, ConnectionClosedError, ProduceResult, ProtocolError
from tests.fakebroker import FakeBroker, Reply, response_frame
from tests.support import load_vectors

TIMEOUT = 5.0


class AioConnectionTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.connection = await Connection.connect(self.broker.address, timeout=TIMEOUT)

    async def asyncTearDown(self):
        await self.connection.close()

    async def test_records_arrive_byte_for_byte(self):
        every_byte = bytes(range(256))
        result = await self.connection.produce("orders", 1, [every_byte, b"\x00"], ack=AckPolicy.FORCED)
        self.assertEqual(result, ProduceResult(0, 2))
        self.assertEqual(self.broker.payloads("orders", 1), [every_byte, b"\x00"])
        self.assertEqual(self.broker.requests[0].fields["ack"], 2)

    async def test_ack_none_returns_without_reading_anything(self):
        async with Connection.connect(self.broker.address, timeout=1.0) as quick:
            self.assertIsNone(await quick.produce("orders", 2, [b"fire"], ack=AckPolicy.NONE))
            await asyncio.to_thread(self.broker.wait_for_requests, 1)
            self.assertEqual(self.broker.payloads("orders", 2), [b"fire"])
            self.assertEqual((await quick.produce("orders", 2, [b"then"])).base_offset, 1)

    async def test_topic_send_refuses_an_empty_record_before_sending(self):
        topic = await self.connection.topic("single")
        with self.assertRaisesRegex(ValueError, "payload: empty"):
            await topic.send(b"")
        # Only API_VERSIONS (asked once, before the first METADATA) and the METADATA went out.
        self.assertEqual([r.api_key for r in self.broker.requests], [6, 3])

    async def test_refusal_keeps_the_connection(self):
        with self.assertRaises(BrokerError) as caught:
            await self.connection.produce("nope", 0, [b"x"])
        self.assertEqual(caught.exception.name, "UNKNOWN_TOPIC_OR_PARTITION")
        with self.assertRaises(BrokerError) as caught:
            await self.connection.produce("orders", 0, [b""])
        self.assertEqual(caught.exception.name, "CORRUPT_REQUEST")
        self.assertFalse(self.connection.closed)
        self.assertEqual((await self.connection.produce("orders", 0, [b"ok"])).base_offset, 0)

    async def test_unknown_error_code_is_a_broker_error_named_unknown_n(self):
        self.broker.respond = lambda r: Reply(response_frame(r.correlation_id, 42))
        with self.assertRaises(BrokerError) as caught:
            await self.connection.metadata()
        self.assertEqual(caught.exception.name, "UNKNOWN(42)")

    async def test_metadata_of_named_topics_and_of_all(self):
        await self.connection.produce("orders", 2, [b"a"])
        (orders,) = await self.connection.metadata("orders")
        self.assertEqual([(p.partition, p.high_watermark) for p in orders.partitions], [(0, 0), (1, 0), (2, 1)])
        self.assertEqual([t.name for t in await self.connection.metadata()], ["orders", "single"])

    async def test_keyed_send_lands_in_the_partition_of_every_vector(self):
        topic = await self.connection.topic("orders")
        _, rows = load_vectors("partitioner-fnv1a.tsv")
        for row in rows:
            key = bytes.fromhex(row["keyHex"])
            with self.subTest(row["name"]):
                await topic.send(row["name"].encode(), key=key)
                self.assertEqual(self.broker.payloads("orders", int(row["p3"]))[-1], row["name"].encode())

    async def test_round_robin_turns_on_every_call_and_every_send(self):
        topic = await self.connection.topic("orders")
        self.assertEqual([topic.partition_for() for _ in range(4)], [0, 1, 2, 0])
        await topic.send(b"r1")
        self.assertEqual(self.broker.payloads("orders", 1), [b"r1"])

    async def test_topic_with_zero_partitions_refuses_to_pick_one(self):
        broker = FakeBroker({"empty": 0})
        self.addCleanup(broker.close)
        async with Connection.connect(broker.address, timeout=TIMEOUT) as connection:
            topic = await connection.topic("empty")
            with self.assertRaises(ValueError):
                await topic.send(b"x")

    async def test_concurrent_requests_are_pipelined_and_matched_in_order(self):
        results = await asyncio.gather(*(self.connection.produce("single", 0, [bytes([i])]) for i in range(30)))
        self.assertEqual(sorted(r.base_offset for r in results), list(range(30)))
        for i, result in enumerate(results):
            self.assertEqual(self.broker.payloads("single", 0)[result.base_offset], bytes([i]))
        self.assertEqual([r.correlation_id for r in self.broker.requests], list(range(1, 31)))

    async def test_wrong_correlation_id_is_a_protocol_error_and_closes(self):
        self.broker.respond = lambda r: Reply(response_frame(r.correlation_id + 1, 0, struct.pack(">qq", 0, 1)))
        with self.assertRaisesRegex(ProtocolError, "correlation id"):
            await self.connection.produce("orders", 0, [b"x"])
        self.assertTrue(self.connection.closed)
        with self.assertRaises(ConnectionClosedError):
            await self.connection.metadata()

    async def test_truncated_response_frame_is_an_error_not_a_hang(self):
        whole = response_frame(1, 0, struct.pack(">qq", 0, 1))
        self.broker.respond = lambda r: Reply(whole[:-5], close=True)
        with self.assertRaises(ConnectionClosedError):
            await self.connection.produce("orders", 0, [b"x"])
        self.assertTrue(self.connection.closed)

    async def test_response_frame_length_out_of_range_is_a_protocol_error(self):
        for length in (5, 8 * 1024 * 1024 + 1):
            with self.subTest(length=length):
                broker = FakeBroker(respond=lambda r, n=length: Reply(struct.pack(">i", n)))
                self.addCleanup(broker.close)
                async with Connection.connect(broker.address, timeout=TIMEOUT) as connection:
                    with self.assertRaises(ProtocolError):
                        await connection.metadata()
                    self.assertTrue(connection.closed)

    async def test_a_failure_reaches_every_request_in_flight(self):
        self.broker.respond = lambda r: Reply(b"", close=True)
        outcomes = await asyncio.gather(*(self.connection.metadata() for _ in range(5)), return_exceptions=True)
        self.assertTrue(all(isinstance(o, ConnectionClosedError) for o in outcomes), outcomes)

    async def test_broker_that_never_answers_times_out(self):
        self.broker.respond = lambda r: Reply(b"")
        async with Connection.connect(self.broker.address, timeout=0.2) as connection:
            with self.assertRaises(TimeoutError):
                await connection.metadata()

    async def test_response_split_at_every_byte_is_reassembled(self):
        self.broker.append("orders", 0, b"first", bytes(range(256)))
        self.broker.respond = lambda r: Reply(r.answer, dribble=True)
        result = await self.connection.fetch("orders", 0, 0, max_wait_millis=0)
        self.assertEqual([r.payload for r in result.records], [b"first", bytes(range(256))])
        self.assertEqual((await self.connection.produce("orders", 0, [b"x"])).base_offset, 2)

    async def test_closed_connection_refuses_use(self):
        await self.connection.close()
        with self.assertRaises(ConnectionClosedError):
            await self.connection.produce("orders", 0, [b"x"])

    async def test_async_with_closes(self):
        async with Connection.connect(self.broker.address, timeout=TIMEOUT) as connection:
            await connection.metadata()
        self.assertTrue(connection.closed)


if __name__ == "__main__":
    unittest.main()
