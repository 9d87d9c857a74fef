"""The accumulator alone, with time passed in: no thread, no socket, no sleeping."""

import unittest

from booblik.batching import Accumulator, records_bytes_max
from booblik.limits import FRAME_BYTES_MAX


class AccumulatorTest(unittest.TestCase):
    def test_nothing_is_due_before_the_linger_and_everything_after(self):
        acc = Accumulator(max_batch_size=100, linger=0.5)
        acc.append("t", 0, b"a", "w1", now=10.0)
        acc.append("t", 0, b"b", "w2", now=10.4)
        self.assertEqual(acc.ready(now=10.49), [])
        self.assertEqual(acc.next_deadline(), 10.5)
        (batch,) = acc.ready(now=10.5)
        self.assertEqual((batch.payloads, batch.waiters), ([b"a", b"b"], ["w1", "w2"]))
        self.assertIsNone(acc.next_deadline())

    def test_full_batch_is_due_at_once(self):
        acc = Accumulator(max_batch_size=2, linger=60)
        self.assertFalse(acc.append("t", 0, b"a", None, now=0))
        self.assertTrue(acc.append("t", 0, b"b", None, now=0))
        self.assertEqual(acc.next_deadline(), float("-inf"))
        self.assertEqual([b.payloads for b in acc.ready(now=0)], [[b"a", b"b"]])

    def test_partitions_keep_separate_batches_and_a_partitions_batches_keep_order(self):
        acc = Accumulator(max_batch_size=2, linger=1)
        for now, (partition, payload) in enumerate([(0, b"a"), (1, b"x"), (0, b"b"), (0, b"c")]):
            acc.append("t", partition, payload, None, now=float(now))
        batches = acc.ready(now=100.0)
        self.assertEqual([(b.partition, b.payloads) for b in batches], [(0, [b"a", b"b"]), (1, [b"x"]), (0, [b"c"])])

    def test_everything_drains_before_the_linger(self):
        acc = Accumulator(max_batch_size=100, linger=60)
        acc.append("t", 0, b"a", None, now=0)
        acc.append("u", 3, b"b", None, now=0)
        self.assertEqual(len(acc), 2)
        self.assertEqual(len(acc.ready(now=0, everything=True)), 2)
        self.assertEqual(len(acc), 0)

    def test_batch_closes_before_it_would_pass_the_frame_cap(self):
        acc = Accumulator(max_batch_size=100, linger=60)
        big = bytes(3 * 1024 * 1024)
        acc.append("t", 0, big, None, now=0)
        acc.append("t", 0, big, None, now=0)
        self.assertTrue(acc.append("t", 0, big, None, now=0))  # the third would not fit one frame
        batches = acc.ready(now=0, everything=True)
        self.assertEqual([len(b.payloads) for b in batches], [2, 1])
        self.assertTrue(all(b.records_bytes <= records_bytes_max("t") for b in batches))

    def test_record_no_frame_can_carry_refused(self):
        acc = Accumulator(max_batch_size=100, linger=60)
        with self.assertRaisesRegex(ValueError, "payload"):
            acc.append("t", 0, bytes(FRAME_BYTES_MAX), None, now=0)


if __name__ == "__main__":
    unittest.main()
