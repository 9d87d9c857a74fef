"""The checks against the reference fake broker: the reference client passes every one, and each
deliberately broken client fails the check aimed at it, which shows every check can fail."""

import unittest
from concurrent.futures import ThreadPoolExecutor

from harness import suite

from . import support
from .reference_client import FLAWS

# flaw of the reference client -> the check that must catch it
AIMED_AT = {
    "metadata-drops-last": "1",
    "utf8-payload": "2",
    "silent-refusals": "3",
    "one-by-one": "4",
    "none-waits": "5",
    "swap-offsets": "6",
    "signed-byte": "7",
    "no-mask": "7",
    "crash-on-refusal": "8",
    "clamp-partition": "9",
    "nul-terminated": "10",
    "caught-up-is-error": "11",
    "truncated-tail-as-record": "12",
    "exceeds-silent": "13",
    "out-of-range-is-empty": "14",
    "forced-as-written": "15",
    "drop-empty-records": "16",
    "pad-to-even": "17",
    "hardcoded-3-partitions": "18",
    "ignore-correlation-id": "19",
    "short-tail-dropped": "20",
    "tail-needs-4-bytes": "21",
    "no-crc-check": "22",
    "eof-ends-frame": "24",
    "create-ignores-revision": "25",
    "list-ignores-selector": "26",
    "mismatch-swaps-revisions": "27",
    "delete-ignores-revision": "28",
}
ALSO_AIMED_AT = {"ignore-correlation-id": "23"}


class ReferenceClient(unittest.TestCase):
    def test_passes_every_check(self):
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, support.reference())
        self.assertEqual(tally.failed, 0, report)
        self.assertEqual(tally.passed, len(suite.CLIENT_CHECKS), report)
        self.assertTrue(report.lines[-1].startswith("PASS 28 "), report)

    def test_a_producer_runs_only_the_producer_checks(self):
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, support.reference("producer-only"),
                                           only={"1", "10"})
        self.assertEqual(tally.results, {"1": True}, report)
        self.assertIn("SKIP 10 ", str(report))

    def test_a_client_that_does_not_claim_topics_is_not_held_to_them(self):
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, support.reference("no-topics-role"),
                                           only={"1", "25", "26", "27", "28"})
        self.assertEqual(tally.results, {"1": True}, report)
        for number in ("25", "26", "27", "28"):
            self.assertIn(f"SKIP {number} ", str(report))

    def test_a_client_that_declares_no_role_fails_the_run(self):
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, support.reference("no-roles"))
        self.assertEqual((tally.passed, tally.failed), (0, 1), report)

    def test_a_client_whose_roles_hold_more_than_producer_and_consumer_fails_the_run(self):
        # The original harness refuses such a run whole: the added roles belong under extras=.
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, support.reference("topics-in-roles"), only={"1"})
        self.assertEqual((tally.passed, tally.failed), (0, 1), report)
        self.assertIn("FAIL capabilities: roles= holds topics", str(report))

    def test_a_client_that_cannot_say_its_capabilities_fails_the_run(self):
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, ["false"])
        self.assertEqual((tally.passed, tally.failed), (0, 1), report)
        self.assertIn("FAIL capabilities", str(report))

    def test_a_hanging_verb_is_killed_at_its_time_limit_and_fails(self):
        broker = support.started_broker(self)
        tally, report = support.run_client(broker, support.reference("hang"), only={"1"},
                                           verb_timeout_s=1.0)
        self.assertEqual(tally.results, {"1": False}, report)
        self.assertIn("did not finish within 1 s", str(report))


class BrokenClients(unittest.TestCase):
    def test_every_flaw_is_aimed_at_a_check(self):
        self.assertEqual(set(AIMED_AT), set(FLAWS) - {"producer-only", "no-roles", "no-topics-role", "topics-in-roles", "hang"})

    def test_every_check_is_the_aim_of_some_flaw(self):
        aimed = set(AIMED_AT.values()) | set(ALSO_AIMED_AT.values())
        self.assertEqual(aimed, {c.number for c in suite.CLIENT_CHECKS})

    def test_each_broken_client_fails_the_check_aimed_at_it(self):
        # In parallel, each against a broker of its own: checks compare high watermarks before and
        # after, so they must not share a broker with another run.
        def run(flaw: str, number: str):
            broker = support.started_broker(self)
            return support.run_client(broker, support.reference(flaw), only={number})

        cases = [*AIMED_AT.items(), *ALSO_AIMED_AT.items()]
        with ThreadPoolExecutor(max_workers=8) as pool:
            outcomes = list(pool.map(lambda case: run(*case), cases))
        for (flaw, number), (tally, report) in zip(cases, outcomes):
            with self.subTest(flaw=flaw, check=number):
                self.assertEqual(tally.results, {number: False}, report)


if __name__ == "__main__":
    unittest.main()
