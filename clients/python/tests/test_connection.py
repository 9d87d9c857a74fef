"""The synchronous Connection and Topic against the fake broker, which decodes what was sent."""

import struct
import unittest

from booblik import AckPolicy, BrokerError, Connection, ConnectionClosedError, ProduceResult, ProtocolError
from tests.fakebroker import FakeBroker, Reply, response_frame
from tests.support import load_vectors

TIMEOUT = 5.0


class ConnectionTest(unittest.TestCase):
    def setUp(self):
        self.broker = FakeBroker()
        self.addCleanup(self.broker.close)
        self.connection = Connection.connect(self.broker.address, timeout=TIMEOUT)
        self.addCleanup(self.connection.close)

    def test_records_arrive_byte_for_byte(self):
        every_byte = bytes(range(256))
        result = self.connection.produce("orders", 1, [every_byte, b"\x00", b"x" * 1000])
        self.assertEqual(result, ProduceResult(0, 3))
        self.assertEqual(self.broker.payloads("orders", 1), [every_byte, b"\x00", b"x" * 1000])
        (request,) = self.broker.requests
        self.assertEqual((request.api_key, request.api_version), (1, 1))
        self.assertEqual(request.fields["ack"], 1)

    def test_batch_lands_contiguously_from_the_previous_high_watermark(self):
        self.connection.produce("orders", 0, [b"a", b"b"])
        result = self.connection.produce("orders", 0, [bytes([i]) for i in range(10)], ack=AckPolicy.FORCED)
        self.assertEqual(result.base_offset, 2)
        self.assertEqual(self.broker.payloads("orders", 0)[2:], [bytes([i]) for i in range(10)])
        self.assertEqual(self.broker.requests[-1].fields["ack"], 2)

    def test_ack_none_returns_without_reading_anything(self):
        # The fake broker sends nothing for NONE: a client that waited would time out here.
        quick = Connection.connect(self.broker.address, timeout=1.0)
        self.addCleanup(quick.close)
        self.assertIsNone(quick.produce("orders", 2, [b"fire"], ack=AckPolicy.NONE))
        self.broker.wait_for_requests(1)
        self.assertEqual(self.broker.payloads("orders", 2), [b"fire"])
        # Nothing was left half-read: the next answer is matched to the next request.
        self.assertEqual(quick.produce("orders", 2, [b"then"]).base_offset, 1)

    def test_refusal_keeps_the_connection(self):
        with self.assertRaises(BrokerError) as caught:
            self.connection.produce("nope", 0, [b"x"])
        self.assertEqual((caught.exception.code, caught.exception.name), (1, "UNKNOWN_TOPIC_OR_PARTITION"))
        with self.assertRaises(BrokerError) as caught:
            self.connection.produce("orders", 9, [b"x"])
        self.assertEqual(caught.exception.name, "UNKNOWN_TOPIC_OR_PARTITION")
        with self.assertRaises(BrokerError) as caught:
            self.connection.produce("orders", 0, [b""])
        self.assertEqual(caught.exception.name, "CORRUPT_REQUEST")
        self.assertEqual(self.broker.payloads("orders", 0), [])
        self.assertFalse(self.connection.closed)
        self.assertEqual(self.connection.produce("orders", 0, [b"ok"]).base_offset, 0)

    def test_unknown_error_code_is_a_broker_error_named_unknown_n(self):
        self.broker.respond = lambda r: Reply(response_frame(r.correlation_id, 99))
        with self.assertRaises(BrokerError) as caught:
            self.connection.metadata()
        self.assertEqual(caught.exception.name, "UNKNOWN(99)")
        self.assertFalse(self.connection.closed)

    def test_metadata_of_named_topics_and_of_all(self):
        self.connection.produce("orders", 2, [b"a", b"b"])
        (orders,) = self.connection.metadata("orders")
        self.assertEqual(orders.name, "orders")
        self.assertEqual(
            [(p.partition, p.log_start_offset, p.high_watermark) for p in orders.partitions],
            [(0, 0, 0), (1, 0, 0), (2, 0, 2)],
        )
        self.assertEqual([t.name for t in self.connection.metadata()], ["orders", "single"])
        self.assertEqual(self.broker.requests[-1].fields["topics"], [])

    def test_metadata_of_a_missing_topic_is_refused_not_empty(self):
        with self.assertRaises(BrokerError) as caught:
            self.connection.metadata("orders", "missing")
        self.assertEqual(caught.exception.name, "UNKNOWN_TOPIC_OR_PARTITION")

    def test_keyed_send_lands_in_the_partition_of_every_vector(self):
        topic = self.connection.topic("orders")
        self.assertEqual(topic.partitions, (0, 1, 2))
        _, rows = load_vectors("partitioner-fnv1a.tsv")
        for row in rows:
            key = bytes.fromhex(row["keyHex"])
            with self.subTest(row["name"]):
                self.assertEqual(topic.partition_for(key), int(row["p3"]))
                payload = row["name"].encode()
                topic.send(payload, key=key)
                self.assertEqual(self.broker.payloads("orders", int(row["p3"]))[-1], payload)

    def test_produce_to_a_bad_topic_name_says_which_character_before_sending(self):
        requests_before = len(self.broker.requests)
        with self.assertRaisesRegex(ValueError, r'topic: "a b" has a character other than .*" " at character 2'):
            self.connection.produce("a b", 0, [b"x"])
        self.assertEqual(len(self.broker.requests), requests_before, "nothing was sent")

    def test_topic_send_refuses_an_empty_record_before_sending(self):
        topic = self.connection.topic("single")
        with self.assertRaisesRegex(ValueError, "payload: empty"):
            topic.send(b"")
        # Only API_VERSIONS (asked once, before the first METADATA) and the METADATA went out.
        self.assertEqual([r.api_key for r in self.broker.requests], [6, 3])

    def test_round_robin_turns_on_every_call_and_every_send(self):
        topic = self.connection.topic("orders")
        self.assertEqual([topic.partition_for() for _ in range(3)], [0, 1, 2])
        topic.send(b"r0")
        topic.send(b"r1")
        self.assertEqual(self.broker.payloads("orders", 0), [b"r0"])
        self.assertEqual(self.broker.payloads("orders", 1), [b"r1"])

    def test_topic_with_zero_partitions_refuses_to_pick_one(self):
        broker = FakeBroker({"empty": 0})
        self.addCleanup(broker.close)
        with Connection.connect(broker.address, timeout=TIMEOUT) as connection:
            topic = connection.topic("empty")
            with self.assertRaises(ValueError):
                topic.send(b"x")

    def test_correlation_ids_increment_per_request(self):
        self.connection.metadata()
        self.connection.produce("orders", 0, [b"a"], ack=AckPolicy.NONE)
        self.connection.produce("orders", 0, [b"b"])
        self.broker.wait_for_requests(4)  # API_VERSIONS went first, before the METADATA
        self.assertEqual([r.correlation_id for r in self.broker.requests], [1, 2, 3, 4])

    def test_wrong_correlation_id_is_a_protocol_error_and_closes(self):
        self.broker.respond = lambda r: Reply(response_frame(r.correlation_id + 1, 0, struct.pack(">qq", 0, 1)))
        with self.assertRaisesRegex(ProtocolError, "correlation id"):
            self.connection.produce("orders", 0, [b"x"])
        self.assertTrue(self.connection.closed)
        with self.assertRaises(ConnectionClosedError):
            self.connection.metadata()

    def test_truncated_response_frame_is_an_error_not_a_hang(self):
        whole = response_frame(1, 0, struct.pack(">qq", 0, 1))
        self.broker.respond = lambda r: Reply(whole[:-5], close=True)
        with self.assertRaises(ConnectionClosedError):
            self.connection.produce("orders", 0, [b"x"])
        self.assertTrue(self.connection.closed)

    def test_response_frame_length_out_of_range_is_a_protocol_error(self):
        for length in (5, 8 * 1024 * 1024 + 1):
            with self.subTest(length=length):
                broker = FakeBroker(respond=lambda r, n=length: Reply(struct.pack(">i", n)))
                self.addCleanup(broker.close)
                with Connection.connect(broker.address, timeout=TIMEOUT) as connection:
                    with self.assertRaises(ProtocolError):
                        connection.metadata()
                    self.assertTrue(connection.closed)

    def test_bad_body_fails_the_call_but_keeps_the_framing(self):
        self.broker.respond = lambda r: (
            Reply(response_frame(r.correlation_id, 0, b"\x00\x01")) if r.api_key == 1 else None
        )
        with self.assertRaises(ProtocolError):
            self.connection.produce("orders", 0, [b"x"])
        self.assertEqual([t.name for t in self.connection.metadata()], ["orders", "single"])

    def test_broker_that_never_answers_times_out_and_closes(self):
        self.broker.respond = lambda r: Reply(b"")  # decoded, never answered
        with Connection.connect(self.broker.address, timeout=0.2) as connection:
            with self.assertRaises(TimeoutError):
                connection.metadata()
            self.assertTrue(connection.closed)  # a late answer would now be taken for the next one

    def test_broker_hanging_up_mid_pipeline_is_connection_closed(self):
        self.broker.respond = lambda r: Reply(b"", close=True)
        with self.assertRaises(ConnectionClosedError):
            self.connection.metadata()

    def test_response_split_at_every_byte_is_reassembled(self):
        self.broker.append("orders", 0, b"first", bytes(range(256)))
        self.broker.respond = lambda r: Reply(r.answer, dribble=True)
        result = self.connection.fetch("orders", 0, 0, max_wait_millis=0)
        self.assertEqual([r.payload for r in result.records], [b"first", bytes(range(256))])
        self.assertEqual(self.connection.produce("orders", 0, [b"x"]).base_offset, 2)

    def test_closed_connection_refuses_use(self):
        self.connection.close()
        with self.assertRaises(ConnectionClosedError):
            self.connection.produce("orders", 0, [b"x"])

    def test_context_manager_closes(self):
        with Connection.connect(self.broker.address, timeout=TIMEOUT) as connection:
            pass
        self.assertTrue(connection.closed)

    def test_bad_addresses_refused_before_connecting(self):
        for address in ("localhost", ":9092", "host:port", "host:0", "host:70000"):
            with self.subTest(address=address), self.assertRaises(ValueError):
                Connection.connect(address)


if __name__ == "__main__":
    unittest.main()
