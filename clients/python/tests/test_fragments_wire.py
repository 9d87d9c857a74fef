"""The LIST_FRAGMENTS codec on its own: the literal bytes of docs/protocol.md and the TypeScript codec
test (packages/protocol/src/requests/list-fragments), and answers that break the protocol's rules."""

import datetime
import unittest

from booblik import wire
from booblik.errors import ProtocolError
from booblik.fragments import (
    ALL_PARTITIONS,
    API_LIST_FRAGMENTS,
    LIST_FRAGMENTS_VERSION,
    Fragment,
    FragmentLocation,
    PartitionFragments,
    decode_list_fragments_response,
    encode_list_fragments_request,
    list_fragments_call,
)

# Partition 0, offsets 0..7: a segment 0..4 of 300 bytes only in the store (persisted at 1 000 ms)
# and the active one, 5..6, of 40 bytes on the broker's disk.
ANSWER_HEX = (
    "00000064 00000004 0000"  # frame length, correlationId 4, no error
    "00000001"  # one partition
    "00000000 0000000000000000 0000000000000007"  # partition 0, logStartOffset 0, highWatermark 7
    "00000002"  # two fragments
    "0000000000000000 0000000000000005 000000000000012c 02 00000000000003e8"
    "0000000000000005 0000000000000007 0000000000000028 01 ffffffffffffffff"
)
ONE_FRAGMENT_BODY = "00000001 00000000 0000000000000000 0000000000000001 00000001"


def body_of(hex_frame):
    _, code, body = wire.split_response(bytes.fromhex(hex_frame)[4:])
    assert code == 0
    return body


def one_fragment(fragment_hex):
    return bytes.fromhex(ONE_FRAGMENT_BODY + fragment_hex)


class ListFragmentsGoldenBytesTest(unittest.TestCase):
    def test_a_request_for_one_partition(self):
        payload = encode_list_fragments_request("ab", 2)
        frame = wire.encode_request(API_LIST_FRAGMENTS, LIST_FRAGMENTS_VERSION, 9, payload)
        self.assertEqual(frame.hex(), bytes.fromhex("00000010 0007 0001 00000009 0002 6162 00000002").hex())

    def test_a_request_for_every_partition_carries_minus_one(self):
        payload, what = list_fragments_call("ab", None)
        self.assertEqual((payload.hex(), what), ("00026162ffffffff", "LIST_FRAGMENTS ab"))
        self.assertEqual(payload, encode_list_fragments_request("ab", ALL_PARTITIONS))

    def test_the_answer_lists_each_segment_with_its_offsets_bytes_place_and_upload_time(self):
        answer = decode_list_fragments_response(body_of(ANSWER_HEX))
        stored = Fragment(0, 5, 300, FragmentLocation.STORE, 1000)
        active = Fragment(5, 7, 40, FragmentLocation.LOCAL, -1)
        self.assertEqual(answer, [PartitionFragments(0, 0, 7, (stored, active))])
        self.assertEqual((stored.first_offset, stored.last_offset, stored.in_store), (0, 4, True))
        self.assertEqual(stored.persisted_at, datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.timezone.utc))
        self.assertEqual((active.last_offset, active.in_store, active.persisted_at), (6, False, None))
        self.assertEqual((str(stored.location), str(active.location)), ("store", "local"))

    def test_an_empty_segment_has_no_last_offset(self):
        (partition,) = decode_list_fragments_response(
            one_fragment("0000000000000003 0000000000000003 0000000000000000 01 ffffffffffffffff")
        )
        self.assertIsNone(partition.fragments[0].last_offset)


class ListFragmentsRefusedAnswersTest(unittest.TestCase):
    def test_a_location_outside_1_to_3_is_a_protocol_error_naming_it(self):
        with self.assertRaisesRegex(ProtocolError, r"fragments\[0\]\.location: 4"):
            decode_list_fragments_response(
                one_fragment("0000000000000000 0000000000000001 0000000000000009 04 0000000000000005")
            )

    def test_an_end_before_its_base_is_a_protocol_error_naming_both(self):
        with self.assertRaisesRegex(ProtocolError, r"fragments\[0\]\.endOffset: 0, expected >= baseOffset \(3\)"):
            decode_list_fragments_response(
                one_fragment("0000000000000003 0000000000000000 0000000000000009 03 0000000000000005")
            )

    def test_a_persisted_time_below_minus_one_is_a_protocol_error(self):
        with self.assertRaisesRegex(ProtocolError, r"persistedMillis: -2"):
            decode_list_fragments_response(
                one_fragment("0000000000000000 0000000000000001 0000000000000009 01 fffffffffffffffe")
            )

    def test_counts_larger_than_the_answer_are_refused_before_allocating(self):
        with self.assertRaisesRegex(ProtocolError, "partitionCount 2147483647"):
            decode_list_fragments_response(bytes.fromhex("7fffffff"))
        with self.assertRaisesRegex(ProtocolError, "fragmentCount 2147483647"):
            decode_list_fragments_response(bytes.fromhex("00000001 00000000" + "00" * 16 + "7fffffff"))

    def test_an_answer_cut_short_or_with_bytes_left_over_is_a_protocol_error(self):
        whole = body_of(ANSWER_HEX)
        with self.assertRaisesRegex(ProtocolError, "fragmentCount 2 does not fit"):
            decode_list_fragments_response(whole[:-1])
        with self.assertRaisesRegex(ProtocolError, "1 unexpected bytes"):
            decode_list_fragments_response(whole + b"\x00")

    def test_a_negative_partition_is_refused_before_anything_is_sent(self):
        with self.assertRaisesRegex(ValueError, "partition: -1"):
            list_fragments_call("orders", -1)


if __name__ == "__main__":
    unittest.main()
