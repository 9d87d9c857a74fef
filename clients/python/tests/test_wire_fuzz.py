"""Whatever the wire brings, decoding ends in a result or a typed error: never struct.error,
IndexError or a hang. Single-bit flips and cuts at every length of real answers (seeded, so a
failure repeats)."""

import random
import struct
import unittest

from booblik import wire
from booblik.errors import BooblikError
from tests.fakebroker import stored_record

SEED = 20240601


def fetch_body():
    payload = b"".join(stored_record(p) for p in (b"a", b"\x00" * 20, bytes(range(256)), b"tail"))
    return struct.pack(">qi", 4, len(payload)) + payload


def metadata_body():
    body = struct.pack(">i", 2)
    for name, partitions in (("orders", 3), ("single", 1)):
        body += struct.pack(">H", len(name)) + name.encode() + struct.pack(">i", partitions)
        for p in range(partitions):
            body += struct.pack(">iqq", p, 0, p * 10)
    return body


DECODERS = {
    "fetch": (fetch_body(), lambda b: wire.decode_fetch_response(b, 0, 4096)),
    "metadata": (metadata_body(), wire.decode_metadata_response),
    "produce": (struct.pack(">qq", 7, 9), wire.decode_produce_response),
}


class WireFuzzTest(unittest.TestCase):
    def assert_typed(self, decode, body):
        try:
            decode(body)
        except BooblikError:
            pass

    def test_every_cut_of_a_good_answer_is_a_result_or_a_typed_error(self):
        for name, (body, decode) in DECODERS.items():
            for cut in range(len(body)):
                with self.subTest(name, cut=cut):
                    self.assert_typed(decode, body[:cut])

    def test_single_bit_flips_are_a_result_or_a_typed_error(self):
        rng = random.Random(SEED)
        for name, (body, decode) in DECODERS.items():
            for _ in range(400):
                flipped = bytearray(body)
                bit = rng.randrange(len(body) * 8)
                flipped[bit // 8] ^= 1 << (bit % 8)
                with self.subTest(name, bit=bit):
                    self.assert_typed(decode, bytes(flipped))

    def test_random_records_payloads_are_a_result_or_a_typed_error(self):
        rng = random.Random(SEED)
        for _ in range(300):
            payload = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
            with self.subTest(payload=payload.hex()):
                self.assert_typed(lambda p: wire.decode_records(p, 0, rng.randrange(1, 64)), payload)


if __name__ == "__main__":
    unittest.main()
