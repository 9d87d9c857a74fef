"""OUTCOME_UNKNOWN (16) and a PRODUCE lost in flight: reported as an unknown outcome, never as a
refusal, and never sent again on the client's own (sync and asyncio), against the fake brokers."""

import threading
import unittest

from booblik import (
    BrokerError,
    Client,
    Connection,
    ConnectionClosedError,
    ErrorCode,
    OutcomeUnknownError,
    Producer,
    ProducerConfig,
    is_outcome_unknown,
)
from booblik import aio
from tests.fakebroker import FakeBroker, Reply, response_frame
from tests.test_client import QUICK, TIMEOUT, FakeCluster

OUTCOME_UNKNOWN = 16


def produces(*brokers) -> int:
    return sum(1 for b in brokers for r in b.requests if r.api_key == 1)


def answer_produce(code: int):
    return lambda r: Reply(response_frame(r.correlation_id, code)) if r.api_key == 1 else None


class Checks:
    def assert_unknown(self, error: BaseException, what: str = "PRODUCE t/0") -> None:
        self.assertIsInstance(error, OutcomeUnknownError)
        self.assertTrue(is_outcome_unknown(error))
        self.assertEqual(error.code, ErrorCode.OUTCOME_UNKNOWN)
        self.assertFalse(error.retriable)
        self.assertRegex(str(error), f"^{what}: outcome unknown: .*may or may not have been stored")
        self.assertNotIn("refused", str(error))

    def assert_lost_in_flight(self, error: BaseException) -> None:
        self.assertIsInstance(error, ConnectionClosedError)
        self.assertTrue(is_outcome_unknown(error))
        self.assertRegex(str(error), r"^PRODUCE t/0: connection to .* lost before the answer: the records may or may not")


class SyncOutcomeUnknownTest(Checks, unittest.TestCase):
    def test_connection_and_topic_report_outcome_unknown_and_the_connection_goes_on(self):
        broker = FakeBroker({"t": 1}, respond=answer_produce(OUTCOME_UNKNOWN))
        self.addCleanup(broker.close)
        with Connection.connect(broker.address, TIMEOUT) as connection:
            with self.assertRaises(BrokerError) as caught:
                connection.produce("t", 0, [b"x"])
            self.assert_unknown(caught.exception)
            with self.assertRaises(OutcomeUnknownError):
                connection.topic("t").send(b"y")
            self.assertFalse(connection.closed)

    def test_client_sends_an_outcome_unknown_produce_once(self):
        c = FakeCluster(self, {"t": 1})
        c.a.respond = answer_produce(OUTCOME_UNKNOWN)
        with Client.connect([c.a.address, c.b.address], TIMEOUT, **QUICK) as client:
            with self.assertRaises(BrokerError) as caught:
                client.produce("t", 0, [b"x"])
        self.assert_unknown(caught.exception)
        self.assertEqual(produces(c.a, c.b), 1)

    def test_producer_over_a_client_fails_the_batch_as_unknown_sent_once(self):
        c = FakeCluster(self, {"t": 1})
        c.a.respond = answer_produce(OUTCOME_UNKNOWN)
        producer = Producer(Client.connect(c.a.address, TIMEOUT, **QUICK), ProducerConfig(linger=0))
        self.addCleanup(producer.close)
        futures = [producer.send("t", b"a", partition=0), producer.send("t", b"b", partition=0)]
        for future in futures:
            self.assert_unknown(future.exception(TIMEOUT))
        self.assertEqual(produces(c.a, c.b), 1)

    def test_a_produce_lost_in_flight_is_unknown_and_a_metadata_is_not(self):
        broker = FakeBroker({"t": 1}, respond=lambda r: Reply(b"", close=True))
        self.addCleanup(broker.close)
        with Connection.connect(broker.address, TIMEOUT) as connection:
            with self.assertRaises(ConnectionClosedError) as caught:
                connection.produce("t", 0, [b"x"])
        self.assert_lost_in_flight(caught.exception)
        with Connection.connect(broker.address, TIMEOUT) as connection:
            with self.assertRaises(ConnectionClosedError) as caught:
                connection.metadata("t")
        self.assertFalse(is_outcome_unknown(caught.exception))

    def test_producer_over_a_connection_fails_batches_in_flight_as_unknown(self):
        broker = FakeBroker({"t": 2}, respond=lambda r: Reply(b"", close=True) if r.api_key == 1 else None)
        self.addCleanup(broker.close)
        producer = Producer(Connection.connect(broker.address, TIMEOUT), ProducerConfig(linger=0))
        self.addCleanup(producer.close)
        error = producer.send("t", b"x", partition=0).exception(TIMEOUT)
        self.assert_lost_in_flight(error)

    def test_client_gives_up_after_a_send_lost_in_flight_with_unknown_not_the_last_refusal(self):
        c = FakeCluster(self, {"t": 1})
        first = threading.Event()

        def respond(r):
            if r.api_key != 1:
                return None
            if not first.is_set():
                first.set()
                return Reply(b"", close=True)  # the first send may have been stored
            return Reply(response_frame(r.correlation_id, ErrorCode.NO_PRIMARY))

        c.a.respond = respond
        with Client.connect(c.a.address, TIMEOUT, route_attempts_max=3, **QUICK) as client:
            with self.assertRaises(BrokerError) as caught:
                client.produce("t", 0, [b"x"])
        self.assert_unknown(caught.exception)
        self.assertIsInstance(caught.exception.__cause__, BrokerError)
        self.assertEqual(caught.exception.__cause__.code, ErrorCode.NO_PRIMARY)
        self.assertEqual(produces(c.a), 3)


class AioOutcomeUnknownTest(Checks, unittest.IsolatedAsyncioTestCase):
    async def test_connection_reports_outcome_unknown_and_the_connection_goes_on(self):
        broker = FakeBroker({"t": 1}, respond=answer_produce(OUTCOME_UNKNOWN))
        self.addCleanup(broker.close)
        async with aio.Connection.connect(broker.address, TIMEOUT) as connection:
            with self.assertRaises(BrokerError) as caught:
                await connection.produce("t", 0, [b"x"])
            self.assert_unknown(caught.exception)
            self.assertFalse(connection.closed)

    async def test_client_sends_an_outcome_unknown_produce_once(self):
        c = FakeCluster(self, {"t": 1})
        c.a.respond = answer_produce(OUTCOME_UNKNOWN)
        async with aio.Client.connect([c.a.address, c.b.address], TIMEOUT, **QUICK) as client:
            with self.assertRaises(BrokerError) as caught:
                await client.produce("t", 0, [b"x"])
        self.assert_unknown(caught.exception)
        self.assertEqual(produces(c.a, c.b), 1)

    async def test_producer_fails_the_batch_as_unknown(self):
        broker = FakeBroker({"t": 1}, respond=answer_produce(OUTCOME_UNKNOWN))
        self.addCleanup(broker.close)
        async with aio.Connection.connect(broker.address, TIMEOUT) as connection:
            async with aio.Producer(connection, ProducerConfig(linger=0)) as producer:
                with self.assertRaises(BrokerError) as caught:
                    await producer.send("t", b"x", partition=0)
        self.assert_unknown(caught.exception)
        self.assertEqual(produces(broker), 1)

    async def test_a_produce_lost_in_flight_is_unknown(self):
        broker = FakeBroker({"t": 1}, respond=lambda r: Reply(b"", close=True))
        self.addCleanup(broker.close)
        async with aio.Connection.connect(broker.address, TIMEOUT) as connection:
            with self.assertRaises(ConnectionClosedError) as caught:
                await connection.produce("t", 0, [b"x"])
        self.assert_lost_in_flight(caught.exception)

    async def test_client_gives_up_after_a_send_lost_in_flight_with_unknown(self):
        c = FakeCluster(self, {"t": 1})
        sends = []

        def respond(r):
            if r.api_key != 1:
                return None
            sends.append(r)
            if len(sends) == 1:
                return Reply(b"", close=True)
            return Reply(response_frame(r.correlation_id, ErrorCode.NO_PRIMARY))

        c.a.respond = respond
        async with aio.Client.connect(c.a.address, TIMEOUT, route_attempts_max=3, **QUICK) as client:
            with self.assertRaises(BrokerError) as caught:
                await client.produce("t", 0, [b"x"])
        self.assert_unknown(caught.exception)
        self.assertEqual(len(sends), 3)


if __name__ == "__main__":
    unittest.main()
