"""The broker checks against the fake broker: they pass on a correct one and fail on a broker
broken in the way each one aims at."""

import unittest

from harness import suite

from . import support


class BrokerChecks(unittest.TestCase):
    def run_checks(self, **broker_kwargs):
        broker = support.started_broker(self, **broker_kwargs)
        report = support.Report()
        return suite.run_broker(broker.address, report), report

    def test_a_correct_broker_passes(self):
        tally, report = self.run_checks()
        self.assertEqual((tally.passed, tally.failed), (3, 0), report)

    def test_wrong_topics_fail_b1(self):
        tally, report = self.run_checks(topics={"conformance": 4, "single": 1})
        self.assertFalse(tally.results["B1"], report)

    def test_answering_a_refused_ack_none_fails_b2(self):
        tally, report = self.run_checks(flaws={"refuses-none-loudly"})
        self.assertFalse(tally.results["B2"], report)
        self.assertTrue(tally.results["B3"], report)

    def test_a_long_fetch_that_sleeps_through_writes_fails_b3(self):
        tally, report = self.run_checks(flaws={"no-wakeup"})
        self.assertFalse(tally.results["B3"], report)
        self.assertTrue(tally.results["B2"], report)


if __name__ == "__main__":
    unittest.main()
