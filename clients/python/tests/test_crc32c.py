import unittest
import zlib

from booblik.crc32c import crc32c
from tests.fakebroker import crc32c_bitwise
from tests.support import load_vectors


class Crc32cTest(unittest.TestCase):
    def test_every_golden_vector(self):
        _, rows = load_vectors("crc32c.tsv")
        self.assertGreater(len(rows), 10)
        for row in rows:
            with self.subTest(row["name"]):
                self.assertEqual(crc32c(bytes.fromhex(row["payloadHex"])), int(row["crc32c"]))

    def test_is_castagnoli_not_zlib(self):
        self.assertEqual(crc32c(b"123456789"), 0xE3069283)
        self.assertNotEqual(crc32c(b"123456789"), zlib.crc32(b"123456789"))
        self.assertEqual(zlib.crc32(b"123456789"), 0xCBF43926)  # what the wrong CRC would give

    def test_values_above_0x7fffffff_read_unsigned(self):
        _, rows = load_vectors("crc32c.tsv")
        high = [r for r in rows if int(r["crc32c"]) > 0x7FFFFFFF]
        self.assertTrue(high, "the vectors include checksums with the top bit set")
        for row in high:
            value = crc32c(bytes.fromhex(row["payloadHex"]))
            self.assertGreater(value, 0x7FFFFFFF)
            self.assertLessEqual(value, 0xFFFFFFFF)

    def test_continuing_over_chunks_equals_one_pass(self):
        data = bytes(range(256)) * 3
        self.assertEqual(crc32c(data[100:], crc32c(data[:100])), crc32c(data))

    def test_table_agrees_with_the_bitwise_definition(self):
        for data in (b"", b"\x00", b"\xff" * 7, bytes(range(256))):
            self.assertEqual(crc32c(data), crc32c_bitwise(data))

    def test_accepts_bytearray_and_memoryview(self):
        self.assertEqual(crc32c(bytearray(b"123456789")), 0xE3069283)
        self.assertEqual(crc32c(memoryview(b"x123456789")[1:]), 0xE3069283)


if __name__ == "__main__":
    unittest.main()
