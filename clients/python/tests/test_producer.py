"""The batching Producer (a thread of its own) against the fake broker."""

import concurrent.futures
import unittest

from booblik import (
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
LONG_LINGER = 60.0  # longer than any test: a batch that went out did so for another reason


class ProducerTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)

    def producer(self, **config) -> Producer:
        connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        producer = Producer(connection, ProducerConfig(**config))
        self.addCleanup(producer.close)
        return producer

    def produce_requests(self):
        return [r for r in self.broker.requests if r.api_key == 1]

    def test_loses_nothing_across_linger_windows(self):
        producer = self.producer(linger=0.001, max_batch_size=7)
        futures = []
        for burst in range(10):
            futures += [producer.send("single", f"{burst}-{i}".encode(), partition=0) for i in range(25)]
            futures[-1].result(TIMEOUT)  # let this burst's lingers expire before the next one
        offsets = [f.result(TIMEOUT) for f in futures]
        self.assertEqual(offsets, list(range(250)))
        self.assertEqual(self.broker.payloads("single", 0), [f"{b}-{i}".encode() for b in range(10) for i in range(25)])
        self.assertTrue(all(len(r.fields["records"]) <= 7 for r in self.produce_requests()))

    def test_batch_goes_out_after_its_linger_without_a_flush(self):
        producer = self.producer(linger=0.01)
        self.assertEqual(producer.send("single", b"alone", partition=0).result(TIMEOUT), 0)

    def test_full_batch_flushes_at_once(self):
        producer = self.producer(linger=LONG_LINGER, max_batch_size=3)
        futures = [producer.send("single", bytes([i]), partition=0) for i in range(4)]
        self.assertEqual([f.result(TIMEOUT) for f in futures[:3]], [0, 1, 2])
        self.assertFalse(futures[3].done())  # the fourth opened a new batch, still lingering
        self.assertEqual([len(r.fields["records"]) for r in self.produce_requests()], [3])
        producer.flush(TIMEOUT)
        self.assertEqual(futures[3].result(), 3)

    def test_partitions_batch_separately(self):
        producer = self.producer(linger=LONG_LINGER)
        sends = [(0, b"a"), (1, b"b"), (0, b"c"), (2, b"d"), (1, b"e")]
        futures = [producer.send("orders", payload, partition=p) for p, payload in sends]
        producer.flush(TIMEOUT)
        self.assertEqual([f.result() for f in futures], [0, 0, 1, 0, 1])
        batches = {r.fields["partition"]: r.fields["records"] for r in self.produce_requests()}
        self.assertEqual(batches, {0: [b"a", b"c"], 1: [b"b", b"e"], 2: [b"d"]})

    def test_close_flushes(self):
        producer = self.producer(linger=LONG_LINGER)
        futures = [producer.send("single", bytes([i]), partition=0) for i in range(5)]
        producer.close()
        self.assertEqual([f.result(0) for f in futures], [0, 1, 2, 3, 4])
        self.assertEqual(len(self.broker.payloads("single", 0)), 5)
        self.assertTrue(producer.connection.closed)

    def test_context_manager_closes_and_flushes(self):
        with self.producer(linger=LONG_LINGER) as producer:
            future = producer.send("single", b"x", partition=0)
        self.assertEqual(future.result(0), 0)

    def test_ack_none_gives_offset_unknown(self):
        producer = self.producer(linger=LONG_LINGER, ack=AckPolicy.NONE)
        futures = [producer.send("single", b"n1", partition=0), producer.send("single", b"n2", partition=0)]
        producer.flush(TIMEOUT)
        self.assertEqual([f.result() for f in futures], [OFFSET_UNKNOWN, OFFSET_UNKNOWN])
        self.broker.wait_for_requests(1)
        self.assertEqual(self.broker.payloads("single", 0), [b"n1", b"n2"])
        self.assertEqual(self.produce_requests()[0].fields["ack"], 0)

    def test_broker_refusal_reaches_every_future_of_the_batch(self):
        producer = self.producer(linger=LONG_LINGER)
        doomed = [producer.send("orders", bytes([i]), partition=9) for i in range(3)]
        fine = producer.send("orders", b"ok", partition=0)
        producer.flush(TIMEOUT)
        for future in doomed:
            self.assertIsInstance(future.exception(), BrokerError)
            self.assertEqual(future.exception().name, "UNKNOWN_TOPIC_OR_PARTITION")
        self.assertEqual(fine.result(), 0)
        after = producer.send("orders", b"after", partition=0)
        producer.flush(TIMEOUT)
        self.assertEqual(after.result(), 1)  # the refusal did not cost the connection

    def test_connection_failure_reaches_every_future_and_later_sends_fail(self):
        self.broker.respond = lambda r: Reply(b"\x00\x00", close=True)
        producer = self.producer(linger=LONG_LINGER)
        futures = [producer.send("orders", b"x", partition=p) for p in (0, 1, 2, 0)]
        producer.flush(TIMEOUT)  # answered, if only by the failure
        for future in futures:
            self.assertIsInstance(future.exception(0), ConnectionClosedError)
        with self.assertRaises(ProducerClosedError):
            producer.send("orders", b"y", partition=0)

    def test_record_lingering_when_the_broker_goes_away_fails_rather_than_hangs(self):
        producer = self.producer(linger=0.2)
        future = producer.send("single", b"orphan", partition=0)
        self.broker.close()
        self.assertIsInstance(future.exception(TIMEOUT), ConnectionClosedError)

    def test_send_after_close_fails(self):
        producer = self.producer()
        producer.close()
        with self.assertRaises(ProducerClosedError):
            producer.send("single", b"late", partition=0)

    def test_future_cancelled_before_sending_is_not_sent(self):
        producer = self.producer(linger=LONG_LINGER)
        kept = producer.send("single", b"kept", partition=0)
        dropped = producer.send("single", b"dropped", partition=0)
        self.assertTrue(dropped.cancel())
        producer.flush(TIMEOUT)
        self.assertEqual(kept.result(), 0)
        self.assertEqual(self.broker.payloads("single", 0), [b"kept"])

    def test_bad_send_fails_alone_and_at_once(self):
        producer = self.producer(linger=LONG_LINGER)
        with self.assertRaises(TypeError):
            producer.send("single", "text is not bytes", partition=0)
        with self.assertRaisesRegex(ValueError, "partition: -1"):
            producer.send("single", b"x", partition=-1)
        good = producer.send("single", b"x", partition=0)
        producer.flush(TIMEOUT)
        self.assertEqual(good.result(), 0)

    def test_bad_topic_name_fails_at_send_naming_the_character_and_nothing_is_sent(self):
        producer = self.producer(linger=LONG_LINGER)
        with self.assertRaisesRegex(ValueError, r'topic: "orders/eu" has a character other than .*"/" at character 7'):
            producer.send("orders/eu", b"x", partition=0)
        with self.assertRaisesRegex(ValueError, "250 characters"):
            producer.send("x" * 250, b"x", partition=0)
        producer.flush(TIMEOUT)
        self.assertEqual(self.produce_requests(), [])

    def test_futures_are_concurrent_futures(self):
        producer = self.producer()
        future = producer.send("single", b"x", partition=0)
        self.assertIsInstance(future, concurrent.futures.Future)
        done, _ = concurrent.futures.wait([future], TIMEOUT)
        self.assertEqual(done, {future})

    def test_bad_config_refused(self):
        with self.assertRaises(ValueError):
            ProducerConfig(linger=-1)
        with self.assertRaises(ValueError):
            ProducerConfig(max_batch_size=0)
        with self.assertRaises(ValueError):
            ProducerConfig(ack=7)


if __name__ == "__main__":
    unittest.main()
