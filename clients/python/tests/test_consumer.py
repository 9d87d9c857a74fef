"""Fetching and consuming, synchronously, against the fake broker."""

import threading
import unittest

from booblik import (
    BrokerError,
    Connection,
    ConnectionClosedError,
    CorruptRecordError,
    Record,
    RecordExceedsMaxBytesError,
)
from tests.fakebroker import FakeBroker

TIMEOUT = 10.0


class FetchTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_records_come_back_in_order_exactly(self):
        payloads = [b"\x00", bytes(range(256)), b"third"]
        self.broker.append("orders", 1, *payloads)
        result = self.connection.fetch("orders", 1, 0, max_wait_millis=0)
        self.assertEqual(result.records, [Record(i, p) for i, p in enumerate(payloads)])
        self.assertEqual((result.high_watermark, result.next_offset), (3, 3))

    def test_fetch_is_v2_with_every_field_sent(self):
        self.broker.append("orders", 0, b"a")
        self.connection.fetch("orders", 0, 0, max_bytes=4096, max_wait_millis=1234, min_bytes=7)
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

    def test_fetch_defaults_to_a_five_second_wait_and_min_bytes_one(self):
        self.broker.append("orders", 0, b"a")
        self.connection.fetch("orders", 0, 0)
        fields = self.broker.requests[0].fields
        self.assertEqual((fields["max_wait_millis"], fields["min_bytes"]), (5000, 1))

    def test_at_the_high_watermark_is_empty_not_an_error(self):
        self.broker.append("orders", 0, b"a", b"b")
        result = self.connection.fetch("orders", 0, 2, max_wait_millis=0)
        self.assertEqual((result.records, result.high_watermark, result.next_offset), ([], 2, 2))

    def test_truncated_tail_is_dropped(self):
        self.broker.append("single", 0, b"1" * 100, b"2" * 100, b"3" * 100)
        result = self.connection.fetch("single", 0, 0, max_bytes=150, max_wait_millis=0)
        self.assertEqual(result.records, [Record(0, b"1" * 100)])
        self.assertEqual(result.next_offset, 1)

    def test_truncation_inside_a_header_is_dropped(self):
        self.broker.append("single", 0, b"a", b"b")
        result = self.connection.fetch("single", 0, 0, max_bytes=9 + 5, max_wait_millis=0)
        self.assertEqual((result.records, result.next_offset), ([Record(0, b"a")], 1))

    def test_truncation_not_taken_for_corruption(self):
        self.broker.append("single", 0, b"a" * 10, b"b" * 10)
        result = self.connection.fetch("single", 0, 0, max_bytes=18 + 15, max_wait_millis=0)
        self.assertEqual(result.records, [Record(0, b"a" * 10)])

    def test_record_larger_than_max_bytes_raises_with_both_numbers(self):
        self.broker.append("single", 0, b"z" * 500)
        with self.assertRaises(RecordExceedsMaxBytesError) as caught:
            self.connection.fetch("single", 0, 0, max_bytes=100, max_wait_millis=0)
        self.assertEqual((caught.exception.record_size, caught.exception.max_bytes), (500, 100))

    def test_corrupt_record_rejected(self):
        self.broker.append("single", 0, b"fine")
        self.broker.append("single", 0, b"bitrot", crc=0xDEADBEEF)
        with self.assertRaises(CorruptRecordError) as caught:
            self.connection.fetch("single", 0, 0, max_wait_millis=0)
        self.assertEqual(caught.exception.offset, 1)
        self.assertEqual(
            self.connection.fetch("single", 0, 0, max_bytes=12, max_wait_millis=0).records, [Record(0, b"fine")]
        )

    def test_offset_past_the_end_is_refused_and_the_connection_kept(self):
        self.broker.append("single", 0, b"a")
        with self.assertRaises(BrokerError) as caught:
            self.connection.fetch("single", 0, 1001, max_wait_millis=0)
        self.assertEqual(caught.exception.name, "OFFSET_OUT_OF_RANGE")
        self.assertEqual(len(self.connection.fetch("single", 0, 0, max_wait_millis=0).records), 1)

    def test_wait_not_shorter_than_the_timeout_refused(self):
        with Connection.connect(self.broker.address, timeout=2.0) as connection:
            with self.assertRaisesRegex(
                ValueError, "max_wait_millis: 2000 ms is not shorter than the connection timeout"
            ):
                connection.fetch("single", 0, 0, max_wait_millis=2000)
            with self.assertRaises(ValueError):
                connection.consumer("single", 0, 0, max_wait_millis=5000)
            connection.fetch("single", 0, 0, max_wait_millis=1999 // 10)
        self.assertEqual(len(self.broker.requests), 1)  # the refused ones never reached the wire

    def test_long_fetch_is_answered_when_a_record_lands(self):
        answered = []
        thread = threading.Thread(
            target=lambda: answered.append(self.connection.fetch("single", 0, 0, max_wait_millis=4000))
        )
        thread.start()
        self.broker.wait_for_fetch_waiting()
        self.broker.append("single", 0, b"woken")
        thread.join(TIMEOUT)
        self.assertEqual(answered[0].records, [Record(0, b"woken")])

    def test_closing_wakes_a_thread_blocked_in_a_long_fetch(self):
        failures = []

        def fetch():
            try:
                self.connection.fetch("single", 0, 0, max_wait_millis=9000)
            except Exception as error:  # noqa: BLE001 - the test inspects it
                failures.append(error)

        thread = threading.Thread(target=fetch)
        thread.start()
        self.broker.wait_for_fetch_waiting()
        self.connection.close()
        thread.join(TIMEOUT / 2)  # well before the broker's wait would end
        self.assertFalse(thread.is_alive())
        self.assertIsInstance(failures[0], ConnectionClosedError)


class ConsumerTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_generator_is_lazy(self):
        consumer = self.connection.consumer("single", 0, 0)
        self.assertEqual(self.broker.requests, [])
        self.broker.append("single", 0, b"first")
        self.assertEqual(next(iter(consumer)), Record(0, b"first"))
        self.assertEqual(len(self.broker.requests), 1)

    def test_iteration_yields_in_order_across_fetches_and_break_works(self):
        self.broker.append("single", 0, *[bytes([i]) * 50 for i in range(6)])
        consumer = self.connection.consumer("single", 0, 1, max_bytes=130)  # two whole records per fetch
        seen = []
        for record in consumer:
            seen.append(record.offset)
            if record.offset == 5:
                break
        self.assertEqual(seen, [1, 2, 3, 4, 5])
        self.assertEqual(consumer.position, 6)
        self.assertEqual(len(self.broker.requests), 3)

    def test_position_counts_only_records_given_out(self):
        self.broker.append("single", 0, b"a", b"b", b"c")
        consumer = self.connection.consumer("single", 0, 0)
        next(consumer)
        self.assertEqual(consumer.position, 1)  # b and c are fetched but not yet given out
        self.assertEqual([r.payload for r in consumer.poll()], [b"b", b"c"])
        self.assertEqual(consumer.position, 3)

    def test_poll_is_one_fetch_and_empty_when_caught_up(self):
        self.broker.append("single", 0, b"a", b"b")
        consumer = self.connection.consumer("single", 0, 0, max_wait_millis=0)
        self.assertEqual([r.payload for r in consumer.poll()], [b"a", b"b"])
        self.assertEqual(consumer.poll(), [])
        self.assertEqual(consumer.position, 2)
        self.assertEqual(len(self.broker.requests), 2)

    def test_the_loop_does_not_end_at_the_end_of_the_log(self):
        self.broker.append("single", 0, b"a")
        consumer = self.connection.consumer("single", 0, 0, max_wait_millis=10)
        iterator = iter(consumer)
        self.assertEqual(next(iterator).payload, b"a")
        thread = threading.Thread(
            target=lambda: self.broker.append("single", 0, b"later") if self.broker.wait_for_requests(3) else None
        )
        thread.start()
        self.assertEqual(next(iterator).payload, b"later")  # empty answers in between, no StopIteration
        thread.join(TIMEOUT)

    def test_seek_moves_the_position_and_drops_what_was_fetched(self):
        self.broker.append("single", 0, b"a", b"b", b"c", b"d")
        consumer = self.connection.consumer("single", 0, 0)
        self.assertEqual(next(consumer).payload, b"a")
        consumer.seek(3)
        self.assertEqual(consumer.position, 3)
        self.assertEqual(next(consumer), Record(3, b"d"))
        consumer.seek(0)
        self.assertEqual(next(consumer), Record(0, b"a"))
        self.assertEqual(self.broker.requests[-1].fields["offset"], 0)

    def test_truncated_tail_is_fetched_again_from_its_start(self):
        self.broker.append("single", 0, b"1" * 100, b"2" * 100, b"3" * 100)
        consumer = self.connection.consumer("single", 0, 0, max_bytes=150)
        self.assertEqual([next(consumer).payload for _ in range(3)], [b"1" * 100, b"2" * 100, b"3" * 100])
        self.assertEqual([r.fields["offset"] for r in self.broker.requests], [0, 1, 2])

    def test_record_larger_than_max_bytes_stops_the_loop_instead_of_stalling(self):
        self.broker.append("single", 0, b"z" * 500)
        consumer = self.connection.consumer("single", 0, 0, max_bytes=100)
        with self.assertRaises(RecordExceedsMaxBytesError):
            next(consumer)
        self.assertEqual(consumer.position, 0)

    def test_bad_arguments_refused_saying_where(self):
        with self.assertRaisesRegex(ValueError, "offset: -1"):
            self.connection.consumer("single", 0, -1)
        with self.assertRaisesRegex(ValueError, "partition: -2"):
            self.connection.consumer("single", -2, 0)


if __name__ == "__main__":
    unittest.main()
