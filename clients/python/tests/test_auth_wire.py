"""AUTHENTICATE v1 as bytes: pinned literally (a round trip alone passes when both sides share a
bug), and every answer that must not be taken."""

import struct
import unittest

from booblik.auth import AuthAnswer, decode_authenticate_response, encode_request
from booblik.errors import ProtocolError


class AuthenticateWireTest(unittest.TestCase):
    def test_the_request_is_mechanism_string_then_data_bytes(self):
        self.assertEqual(encode_request(("TOKEN", b"abc")), b"\x00\x05TOKEN\x00\x00\x00\x03abc")
        self.assertEqual(encode_request(("SCRAM-SHA-256", b"")), b"\x00\x0dSCRAM-SHA-256\x00\x00\x00\x00")

    def test_a_complete_answer_decodes_with_principal_and_expiry(self):
        body = b"\x01" + b"\x00\x00\x00\x02v=" + b"\x00\x05alice" + struct.pack(">q", 1_700_000_000_000)
        self.assertEqual(decode_authenticate_response(body), AuthAnswer(True, b"v=", "alice", 1_700_000_000_000))

    def test_answers_that_break_the_wire_are_protocol_errors(self):
        good_tail = b"\x00\x00\x00\x00" + b"\x00\x00" + struct.pack(">q", -1)
        cases = {
            "complete is neither 0 nor 1": b"\x02" + good_tail,
            "a negative data length": b"\x00\xff\xff\xff\xff" + b"\x00\x00" + struct.pack(">q", -1),
            "data longer than the body": b"\x00\x00\x00\x00\x09ab",
            "bytes after the last field": b"\x00" + good_tail + b"\x00",
            "cut short before expiresAtMs": b"\x00\x00\x00\x00\x00\x00\x00",
        }
        for name, body in cases.items():
            with self.subTest(name), self.assertRaises(ProtocolError):
                decode_authenticate_response(body)


if __name__ == "__main__":
    unittest.main()
