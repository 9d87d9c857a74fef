"""The harness's own codec: golden bytes (a round trip alone passes when encoder and decoder share a
bug), the checksum and partitioner vectors, and record splitting at every possible cut."""

import struct
import unittest

from harness import wire
from harness.client_command import parse_output
from harness.crc32c import crc32c
from harness.fnv1a import fnv1a32, partition_for
from harness.vectors import load


class Checksums(unittest.TestCase):
    def test_crc32c_check_value_is_castagnoli_not_zlib(self):
        self.assertEqual(crc32c(b"123456789"), 0xE3069283)

    def test_crc32c_agrees_with_every_vector(self):
        for row in load("crc32c.tsv"):
            with self.subTest(row["name"]):
                self.assertEqual(crc32c(bytes.fromhex(row["payloadHex"])), int(row["crc32c"]))

    def test_fnv1a_agrees_with_every_vector(self):
        for row in load("partitioner-fnv1a.tsv"):
            key = bytes.fromhex(row["keyHex"])
            with self.subTest(row["name"]):
                self.assertEqual(fnv1a32(key), int(row["hash"]))
                self.assertEqual(partition_for(key, 3), int(row["p3"]))


class GoldenBytes(unittest.TestCase):
    def test_produce_request(self):
        frame = wire.request_frame(1, 1, 7, wire.produce_v1("t", 2, wire.ACK_FORCED, [b"ab", b"c"]))
        self.assertEqual(frame.hex(), "0000001f" "00010001" "00000007" "000174" "00000002" "02"
                                      "00000002" "000000026162" "0000000163")

    def test_fetch_v2_request(self):
        frame = wire.request_frame(2, 2, 1, wire.fetch_v2("ab", 0, 5, 100, 250, 1))
        self.assertEqual(frame.hex(), "00000024" "00020002" "00000001" "00026162" "00000000"
                                      "0000000000000005" "00000064" "000000fa" "00000001")

    def test_metadata_request(self):
        frame = wire.request_frame(3, 1, 9, wire.metadata_v1(["x", "yz"]))
        self.assertEqual(frame.hex(), "00000013" "00030001" "00000009" "00000002" "000178"
                                      "0002797a")

    def test_stored_record_carries_crc32c_of_its_payload(self):
        self.assertEqual(wire.stored_record(b"123456789").hex(),
                         "00000009" "e3069283" + b"123456789".hex())

    def test_metadata_response(self):
        body = bytes.fromhex("00000001" "000161" "00000002" "00000000" "0000000000000000"
                             "0000000000000003" "00000001" "0000000000000001" "0000000000000004")
        self.assertEqual(wire.parse_metadata_body(body), {"a": [(0, 0, 3), (1, 1, 4)]})

    def test_fetch_response_payload_bytes_must_match_the_frame(self):
        self.assertEqual(wire.parse_fetch_body(bytes.fromhex("0000000000000005" "00000002" "abcd")),
                         (5, b"\xab\xcd"))
        with self.assertRaises(wire.ProtocolError):
            wire.parse_fetch_body(bytes.fromhex("0000000000000005" "00000003" "abcd"))

    def test_produce_request_decodes_as_encoded(self):
        frame = wire.request_frame(1, 1, 3, wire.produce_v1("topic", 4, wire.ACK_NONE, [b"\x00"]))
        request = wire.parse_request(frame[4:])
        self.assertEqual((request.api_key, request.correlation_id, request.topic, request.partition,
                          request.ack, request.records), (1, 3, "topic", 4, 0, [b"\x00"]))


class SplitRecords(unittest.TestCase):
    RECORDS = [b"\x00", b"hello", bytes(range(256))]
    PAYLOAD = b"".join(wire.stored_record(r) for r in RECORDS)

    def test_every_cut_keeps_only_whole_records(self):
        ends = [0]
        for record in self.RECORDS:
            ends.append(ends[-1] + 8 + len(record))
        for cut in range(len(self.PAYLOAD) + 1):
            whole = sum(1 for end in ends[1:] if end <= cut)
            split = wire.split_records(self.PAYLOAD[:cut])
            self.assertEqual(split.records, self.RECORDS[:whole], f"cut at {cut}")
            self.assertEqual(split.tail_bytes, cut - ends[whole], f"cut at {cut}")

    def test_a_flipped_bit_anywhere_is_caught(self):
        for index in range(len(self.PAYLOAD)):
            damaged = bytearray(self.PAYLOAD)
            damaged[index] ^= 0x10
            with self.subTest(byte=index):
                try:
                    split = wire.split_records(bytes(damaged))
                except wire.ProtocolError:
                    continue
                # A damaged size field may turn the rest into a truncated tail; never a bad record.
                self.assertEqual(split.records, self.RECORDS[: len(split.records)])

    def test_a_record_size_of_zero_is_a_protocol_error(self):
        with self.assertRaises(wire.ProtocolError):
            wire.split_records(struct.pack(">iI", 0, 0))


class ClientOutput(unittest.TestCase):
    def test_a_key_printed_several_times_is_a_list(self):
        values = parse_output("record=00\nrecord=ff\r\nhighWatermark=3\nnoise\n\nerror=X=Y\n")
        self.assertEqual(values, {"record": ["00", "ff"], "highWatermark": ["3"],
                                  "error": ["X=Y"]})

    def test_an_empty_value_is_kept(self):
        self.assertEqual(parse_output("roles=\n"), {"roles": [""]})


if __name__ == "__main__":
    unittest.main()
