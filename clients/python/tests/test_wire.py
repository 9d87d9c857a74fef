"""The codec on its own: literal golden bytes (a round trip alone passes when encoder and decoder
share a bug), and every way a fetch payload can be cut."""

import struct
import unittest

from booblik import wire
from booblik.errors import (
    BrokerError,
    CorruptRecordError,
    ErrorCode,
    ProtocolError,
    RecordExceedsMaxBytesError,
    error_name,
)
from booblik.wire import AckPolicy, Record
from tests.fakebroker import stored_record


class GoldenBytesTest(unittest.TestCase):
    def test_produce_request_frame(self):
        payload = wire.encode_produce_request("t", 2, AckPolicy.WRITTEN, [b"ab", b"c"])
        frame = wire.encode_request(wire.API_PRODUCE, wire.PRODUCE_VERSION, 7, payload)
        self.assertEqual(
            frame.hex(" "),
            "00 00 00 1f 00 01 00 01 00 00 00 07"  # length 31, PRODUCE v1, correlation 7
            " 00 01 74 00 00 00 02 01"  # topic "t", partition 2, ack WRITTEN
            " 00 00 00 02 00 00 00 02 61 62 00 00 00 01 63",  # 2 records: "ab", "c"
        )

    def test_fetch_v2_request_frame(self):
        payload = wire.encode_fetch_request("t", 0, 5, 1024, 5000, 1)
        frame = wire.encode_request(wire.API_FETCH, wire.FETCH_VERSION, 9, payload)
        self.assertEqual(
            frame.hex(" "),
            "00 00 00 23 00 02 00 02 00 00 00 09"  # length 35, FETCH v2, correlation 9
            " 00 01 74 00 00 00 00 00 00 00 00 00 00 00 05"  # topic "t", partition 0, offset 5
            " 00 00 04 00 00 00 13 88 00 00 00 01",  # maxBytes 1024, maxWaitMillis 5000, minBytes 1
        )

    def test_metadata_request_frame(self):
        frame = wire.encode_request(
            wire.API_METADATA, wire.METADATA_VERSION, 1, wire.encode_metadata_request(["a", "bc"])
        )
        self.assertEqual(frame.hex(" "), "00 00 00 13 00 03 00 01 00 00 00 01 00 00 00 02 00 01 61 00 02 62 63")

    def test_fetch_response_with_a_crc_above_0x7fffffff_and_a_cut_tail(self):
        frame = bytes.fromhex(
            "00000009 0000"  # correlation 9, no error
            "0000000000000007 00000019"  # highWatermark 7, 25 payload bytes
            "00000002 f59dd9c2 6869"  # "hi", crc32c 0xf59dd9c2 (top bit set)
            "00000001 527d5351 00"  # one 0x00 byte
            "00000003 364b"  # a record cut inside its crc: dropped
        )
        correlation_id, code, body = wire.split_response(frame)
        self.assertEqual((correlation_id, code), (9, 0))
        result = wire.decode_fetch_response(body, 4, 25)
        self.assertEqual(result.high_watermark, 7)
        self.assertEqual(result.records, [Record(4, b"hi"), Record(5, b"\x00")])
        self.assertEqual(result.next_offset, 6)

    def test_produce_response(self):
        body = bytes.fromhex("000000000000002a 0000000000000030")
        self.assertEqual(wire.decode_produce_response(body), wire.ProduceResult(42, 48))

    def test_metadata_response(self):
        body = bytes.fromhex(
            "00000001 0001 74 00000002"  # one topic "t" with 2 partitions (listed out of order)
            "00000001 0000000000000003 0000000000000009"
            "00000000 0000000000000000 0000000000000004"
        )
        (topic,) = wire.decode_metadata_response(body)
        self.assertEqual(topic.name, "t")
        self.assertEqual(topic.partitions, (wire.PartitionMetadata(0, 0, 4), wire.PartitionMetadata(1, 3, 9)))


class RequestChecksTest(unittest.TestCase):
    def test_single_bytes_value_as_records_refused(self):
        with self.assertRaises(TypeError):
            wire.encode_produce_request("t", 0, AckPolicy.WRITTEN, b"abc")

    def test_no_records_refused(self):
        with self.assertRaises(ValueError):
            wire.encode_produce_request("t", 0, AckPolicy.WRITTEN, [])

    def test_zero_length_record_is_encoded_for_the_broker_to_refuse(self):
        payload = wire.encode_produce_request("t", 0, AckPolicy.WRITTEN, [b""])
        self.assertTrue(payload.endswith(b"\x00\x00\x00\x01\x00\x00\x00\x00"))

    def test_negative_partition_refused_saying_where(self):
        with self.assertRaisesRegex(ValueError, r"partition: -1"):
            wire.encode_produce_request("t", -1, AckPolicy.WRITTEN, [b"x"])

    def test_min_bytes_above_max_bytes_refused(self):
        with self.assertRaisesRegex(ValueError, "min_bytes"):
            wire.encode_fetch_request("t", 0, 0, 10, 0, 11)

    def test_max_bytes_that_could_not_fit_a_frame_refused(self):
        with self.assertRaisesRegex(ValueError, "max_bytes"):
            wire.encode_fetch_request("t", 0, 0, 8 * 1024 * 1024, 0, 1)

    def test_request_over_the_frame_cap_refused(self):
        with self.assertRaisesRegex(ValueError, "at most"):
            wire.encode_request(1, 1, 1, bytes(8 * 1024 * 1024))


class ResponseFramingTest(unittest.TestCase):
    def test_frame_length_below_6_is_a_protocol_error(self):
        with self.assertRaises(ProtocolError):
            wire.response_frame_length(struct.pack(">i", 5))

    def test_frame_length_above_8_mib_is_a_protocol_error(self):
        with self.assertRaises(ProtocolError):
            wire.response_frame_length(struct.pack(">i", 8 * 1024 * 1024 + 1))

    def test_negative_frame_length_is_a_protocol_error(self):
        with self.assertRaises(ProtocolError):
            wire.response_frame_length(b"\xff\xff\xff\xff")

    def test_frame_lengths_at_the_bounds_accepted(self):
        self.assertEqual(wire.response_frame_length(struct.pack(">i", 6)), 6)
        self.assertEqual(wire.response_frame_length(struct.pack(">i", 8 * 1024 * 1024)), 8 * 1024 * 1024)

    def test_payload_bytes_disagreeing_with_the_frame_is_a_protocol_error(self):
        body = struct.pack(">qi", 1, 20) + stored_record(b"x")
        with self.assertRaisesRegex(ProtocolError, "payloadBytes"):
            wire.decode_fetch_response(body, 0, 100)

    def test_short_produce_body_is_a_protocol_error_not_a_struct_error(self):
        with self.assertRaises(ProtocolError):
            wire.decode_produce_response(b"\x00" * 9)

    def test_metadata_string_running_past_the_body_is_a_protocol_error(self):
        with self.assertRaises(ProtocolError):
            wire.decode_metadata_response(bytes.fromhex("00000001 0009 74"))

    def test_trailing_bytes_after_a_produce_answer_are_a_protocol_error(self):
        with self.assertRaises(ProtocolError):
            wire.decode_produce_response(b"\x00" * 17)


class DecodeRecordsTest(unittest.TestCase):
    def test_records_in_order_with_their_offsets(self):
        payload = b"".join(stored_record(p) for p in (b"a", b"bb", b"ccc"))
        records, next_offset = wire.decode_records(payload, 10, 1000)
        self.assertEqual(records, [Record(10, b"a"), Record(11, b"bb"), Record(12, b"ccc")])
        self.assertEqual(next_offset, 13)

    def test_empty_payload_is_empty_not_an_error(self):
        self.assertEqual(wire.decode_records(b"", 3, 100), ([], 3))

    def test_truncated_tail_dropped_and_position_stops_before_it(self):
        payload = stored_record(b"x" * 100) + stored_record(b"y" * 100)
        records, next_offset = wire.decode_records(payload[:150], 0, 150)
        self.assertEqual([r.payload for r in records], [b"x" * 100])
        self.assertEqual(next_offset, 1)

    def test_truncation_inside_a_header_dropped(self):
        payload = stored_record(b"a") + stored_record(b"b")
        for cut in range(len(stored_record(b"a")) + 1, len(payload)):
            with self.subTest(cut=cut):
                records, next_offset = wire.decode_records(payload[:cut], 0, cut)
                self.assertEqual((records, next_offset), ([Record(0, b"a")], 1))

    def test_record_larger_than_max_bytes_reports_both_numbers(self):
        payload = stored_record(b"z" * 500)[:100]
        with self.assertRaises(RecordExceedsMaxBytesError) as caught:
            wire.decode_records(payload, 4, 100)
        self.assertEqual(
            (caught.exception.record_size, caught.exception.max_bytes, caught.exception.offset), (500, 100, 4)
        )
        self.assertIn("500", str(caught.exception))
        self.assertIn("100", str(caught.exception))

    def test_record_whose_header_alone_exceeds_max_bytes(self):
        with self.assertRaises(RecordExceedsMaxBytesError) as caught:
            wire.decode_records(stored_record(b"q")[:5], 0, 5)
        self.assertIsNone(caught.exception.record_size)

    def test_record_just_over_max_bytes_with_its_header_counts(self):
        # 95 payload bytes + 8 header bytes do not fit in 100.
        with self.assertRaises(RecordExceedsMaxBytesError):
            wire.decode_records(stored_record(b"w" * 95)[:100], 0, 100)

    def test_broker_stopping_early_inside_a_record_that_fits_is_empty_not_an_error(self):
        records, next_offset = wire.decode_records(stored_record(b"v" * 50)[:20], 0, 1000)
        self.assertEqual((records, next_offset), ([], 0))

    def test_corrupt_record_rejected_never_returned(self):
        payload = stored_record(b"good") + stored_record(b"evil", crc=0x12345678)
        with self.assertRaises(CorruptRecordError) as caught:
            wire.decode_records(payload, 0, 1000)
        self.assertEqual((caught.exception.offset, caught.exception.expected_crc), (1, 0x12345678))

    def test_flipped_payload_bit_is_corruption(self):
        record = bytearray(stored_record(b"payload"))
        record[-1] ^= 0x01
        with self.assertRaises(CorruptRecordError):
            wire.decode_records(bytes(record), 0, 1000)

    def test_truncation_not_taken_for_corruption(self):
        # The cut tail's partial payload would fail its CRC; it must be dropped, not reported.
        payload = stored_record(b"a" * 10) + stored_record(b"b" * 10)[:15]
        records, _ = wire.decode_records(payload, 0, len(payload))
        self.assertEqual(records, [Record(0, b"a" * 10)])

    def test_size_zero_or_negative_is_a_protocol_error(self):
        for size in (0, -1):
            with self.subTest(size=size), self.assertRaises(ProtocolError):
                wire.decode_records(struct.pack(">iI", size, 0) + b"xxxx", 0, 100)


class ErrorCodeTest(unittest.TestCase):
    def test_known_codes_by_name(self):
        self.assertEqual(error_name(1), "UNKNOWN_TOPIC_OR_PARTITION")
        self.assertEqual(error_name(5), "CORRUPT_REQUEST")
        self.assertEqual(ErrorCode.OFFSET_OUT_OF_RANGE, 2)

    def test_unknown_code_shown_as_unknown_n(self):
        self.assertEqual(error_name(77), "UNKNOWN(77)")
        error = BrokerError(77, "FETCH t/0")
        self.assertEqual((error.code, error.name), (77, "UNKNOWN(77)"))
        self.assertIn("UNKNOWN(77)", str(error))


class OnlyTopicTest(unittest.TestCase):
    def test_metadata_answering_for_another_topic_is_a_protocol_error(self):
        other = wire.TopicMetadata("other", ())
        with self.assertRaises(ProtocolError):
            wire.only_topic([other], "orders")
        with self.assertRaises(ProtocolError):
            wire.only_topic([], "orders")
        self.assertIs(wire.only_topic([other], "other"), other)


if __name__ == "__main__":
    unittest.main()
