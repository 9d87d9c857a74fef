import unittest

from booblik.partitioner import Partitioner, fnv1a, partition_index
from tests.support import load_vectors


class PartitionerTest(unittest.TestCase):
    def test_every_vector_in_every_column(self):
        header, rows = load_vectors("partitioner-fnv1a.tsv")
        columns = [c for c in header if c.startswith("p") and c[1:].isdigit()]
        self.assertEqual(columns, ["p1", "p2", "p3", "p4", "p7", "p16", "p64", "p1000"])
        for row in rows:
            key = bytes.fromhex(row["keyHex"])
            with self.subTest(row["name"]):
                self.assertEqual(fnv1a(key), int(row["hash"]))
                for column in columns:
                    self.assertEqual(partition_index(key, int(column[1:])), int(row[column]), column)

    def test_hash_stays_within_32_bits_on_long_keys(self):
        # Without the mask Python's integers grow forever and agree with no other language.
        self.assertLessEqual(fnv1a(b"x" * 10_000), 0xFFFFFFFF)

    def test_high_bytes_read_unsigned(self):
        self.assertEqual(fnv1a(b"\x80"), 2232128415)

    def test_str_key_is_its_utf8_bytes(self):
        self.assertEqual(fnv1a("заказ-7".encode()), 3316163555)
        self.assertEqual(partition_index("заказ-7", 3), partition_index("заказ-7".encode(), 3))

    def test_zero_partitions_refused(self):
        with self.assertRaises(ValueError):
            partition_index(b"k", 0)
        with self.assertRaises(ValueError):
            Partitioner([]).partition_for(b"k")
        with self.assertRaises(ValueError):
            Partitioner([]).partition_for(None)

    def test_empty_key_hashes_rather_than_taking_a_turn(self):
        partitioner = Partitioner([0, 1, 2])
        self.assertEqual({partitioner.partition_for(b"") for _ in range(5)}, {1})  # p3 of the empty key

    def test_none_key_turns_round_robin_on_every_call(self):
        partitioner = Partitioner([0, 1, 2])
        self.assertEqual([partitioner.partition_for(None) for _ in range(7)], [0, 1, 2, 0, 1, 2, 0])

    def test_index_is_into_partitions_sorted_by_id(self):
        partitioner = Partitioner([12, 10, 11])
        self.assertEqual(partitioner.partitions, (10, 11, 12))
        self.assertEqual(partitioner.partition_for(bytes.fromhex("ff")), 12)  # p3 of 0xff is index 2

    def test_key_of_wrong_type_refused(self):
        with self.assertRaises(TypeError):
            Partitioner([0]).partition_for(42)


if __name__ == "__main__":
    unittest.main()
