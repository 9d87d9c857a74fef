"""The two conformance commands (conformance/clients/python and python-asyncio), run as the kit runs
them: a subprocess per verb, BOOBLIK_BROKER in the environment, key=value lines on stdout."""

import os
import subprocess
import sys
import unittest

from tests.fakebroker import FakeBroker
from tests.support import load_vectors

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLIENTS = os.path.join(REPO, "conformance", "clients")
VERB_SECONDS = 20  # what the kit allows each verb


class ConformanceClientChecks:
    COMMAND = ""

    def setUp(self):
        path = os.path.join(CLIENTS, self.COMMAND)
        if not os.path.exists(path):
            self.skipTest(f"{path} is not part of this checkout")
        self.path = path
        self.broker = FakeBroker({"conformance": 3, "single": 1})
        self.addCleanup(self.broker.close)

    def run_verb(self, *args, broker=True):
        env = dict(os.environ)
        env.pop("BOOBLIK_BROKER", None)
        if broker:
            env["BOOBLIK_BROKER"] = self.broker.address
        done = subprocess.run(
            [sys.executable, self.path, *args], env=env, capture_output=True, text=True, timeout=VERB_SECONDS
        )
        return done.returncode, done.stdout.splitlines(), done.stderr

    def ok(self, *args):
        code, lines, stderr = self.run_verb(*args)
        self.assertEqual(code, 0, stderr)
        return lines

    def test_capabilities_need_no_broker(self):
        code, lines, _ = self.run_verb("capabilities", broker=False)
        self.assertEqual((code, lines), (0, ["roles=producer,consumer", "extras=topics", f"name={self.COMMAND}"]))

    def test_command_is_executable_on_its_own(self):
        self.assertTrue(os.access(self.path, os.X_OK), f"{self.path} is not executable")
        done = subprocess.run([self.path, "capabilities"], capture_output=True, text=True, timeout=VERB_SECONDS)
        self.assertEqual(done.stdout.splitlines()[-1], f"name={self.COMMAND}")

    def test_metadata_reports_exactly_the_partitions(self):
        self.broker.append("conformance", 2, b"a", b"b")
        self.assertEqual(self.ok("metadata", "conformance"), ["partition=0 0 0", "partition=1 0 0", "partition=2 0 2"])

    def test_every_byte_value_arrives_byte_for_byte(self):
        every = bytes(range(256))
        self.assertEqual(self.ok("produce", "single", "0", "written", every.hex()), ["baseOffset=0", "logEndOffset=1"])
        self.assertEqual(self.broker.payloads("single", 0), [every])

    def test_empty_record_is_sent_and_its_refusal_printed(self):
        self.assertEqual(self.ok("produce", "single", "0", "written", ""), ["error=CORRUPT_REQUEST"])
        (request,) = self.broker.requests
        self.assertEqual(request.fields["records"], [b""])

    def test_batch_of_ten_lands_contiguously(self):
        self.broker.append("single", 0, b"earlier")
        records = [bytes([i]) * (i + 1) for i in range(10)]
        lines = self.ok("produce", "single", "0", "written", ",".join(r.hex() for r in records))
        self.assertEqual(lines, ["baseOffset=1", "logEndOffset=11"])
        self.assertEqual(self.broker.payloads("single", 0)[1:], records)

    def test_ack_none_prints_nothing_and_the_record_arrives(self):
        self.assertEqual(self.ok("produce", "single", "0", "none", "cafe"), [])
        self.broker.wait_for_requests(1)
        self.assertEqual(self.broker.payloads("single", 0), [b"\xca\xfe"])
        self.assertEqual(self.broker.requests[0].fields["ack"], 0)

    def test_ack_forced_answered_with_the_base_offset(self):
        self.broker.append("single", 0, b"x", b"y")
        self.assertEqual(self.ok("produce", "single", "0", "forced", "01"), ["baseOffset=2", "logEndOffset=3"])
        self.assertEqual(self.broker.requests[0].fields["ack"], 2)

    def test_keyed_records_go_where_the_vectors_say(self):
        _, rows = load_vectors("partitioner-fnv1a.tsv")
        for row in rows[:6] + rows[-4:]:  # the edge bytes, the empty key, and random keys
            with self.subTest(row["name"]):
                partition = int(row["p3"])
                before = len(self.broker.payloads("conformance", partition))
                lines = self.ok("produce-keyed", "conformance", row["keyHex"], "ab")
                self.assertEqual(lines, [f"partition={partition}", f"baseOffset={before}"])
                self.assertEqual(len(self.broker.payloads("conformance", partition)), before + 1)

    def test_unknown_topic_refused_not_a_crash(self):
        self.assertEqual(self.ok("metadata", "no-such-topic"), ["error=UNKNOWN_TOPIC_OR_PARTITION"])
        self.assertEqual(
            self.ok("produce", "no-such-topic", "0", "written", "00"), ["error=UNKNOWN_TOPIC_OR_PARTITION"]
        )
        self.assertEqual(self.ok("produce-keyed", "no-such-topic", "00", "00"), ["error=UNKNOWN_TOPIC_OR_PARTITION"])

    def test_missing_partition_refused(self):
        self.assertEqual(self.ok("produce", "single", "7", "written", "00"), ["error=UNKNOWN_TOPIC_OR_PARTITION"])
        self.assertEqual(self.ok("fetch", "single", "7", "0", "100"), ["error=UNKNOWN_TOPIC_OR_PARTITION"])

    def test_fetch_returns_exactly_the_records(self):
        self.broker.append("single", 0, b"\x00", b"hello", bytes(range(256)))
        lines = self.ok("fetch", "single", "0", "0", "100000")
        self.assertEqual(
            lines, ["highWatermark=3", "record=00", "record=68656c6c6f", f"record={bytes(range(256)).hex()}"]
        )

    def test_fetch_at_the_high_watermark_is_empty(self):
        self.broker.append("single", 0, b"a")
        self.assertEqual(self.ok("fetch", "single", "0", "1", "1000"), ["highWatermark=1"])

    def test_fetch_drops_a_truncated_tail(self):
        self.broker.append("single", 0, b"1" * 100, b"2" * 100, b"3" * 100)
        self.assertEqual(
            self.ok("fetch", "single", "0", "0", "150"), ["highWatermark=3", "record=" + (b"1" * 100).hex()]
        )

    def test_record_over_max_bytes_reported_with_its_size(self):
        self.broker.append("single", 0, b"z" * 500)
        self.assertEqual(self.ok("fetch", "single", "0", "0", "100"), ["recordExceedsMaxBytes=500"])

    def test_offset_past_the_end_refused(self):
        self.assertEqual(self.ok("fetch", "single", "0", "1000", "100"), ["error=OFFSET_OUT_OF_RANGE"])

    def test_fetch_never_waits(self):
        self.ok("fetch", "single", "0", "0", "100")
        self.assertEqual(self.broker.requests[0].fields["max_wait_millis"], 0)

    def test_topics_create_list_stale_and_delete(self):
        # The fake's startup topics are revision 1.
        self.assertEqual(self.ok("topics-apply", "t", "2", "team=p,env=x", "0"), ["revision=2"])
        self.assertEqual(self.ok("topics-list", "team=p"), ["revision=2", "topic=t 2 2 env=x,team=p"])
        self.assertEqual(self.ok("topics-list", "name=single"), ["revision=2", "topic=single 1 1 -"])
        self.assertEqual(
            self.ok("topics-apply", "t", "3", "-", "1"),
            ["error=REVISION_MISMATCH", "topic=t", "expectedRevision=1", "actualRevision=2"],
        )
        self.assertEqual(self.ok("topics-delete", "t", "2"), ["revision=3"])
        self.assertEqual(self.ok("topics-list", "team=p"), ["revision=3"])

    def test_usage_errors_exit_non_zero(self):
        self.assertEqual(self.run_verb("produce", "single")[0], 2)
        self.assertEqual(self.run_verb("produce", "single", "0", "sometimes", "00")[0], 2)
        self.assertEqual(self.run_verb("metadata", "single", broker=False)[0], 2)

    def test_client_failure_exits_one(self):
        self.broker.close()
        code, lines, _ = self.run_verb("metadata", "single")
        self.assertEqual((code, lines), (1, []))


class PythonConformanceClientTest(ConformanceClientChecks, unittest.TestCase):
    COMMAND = "python"


class PythonAsyncioConformanceClientTest(ConformanceClientChecks, unittest.TestCase):
    COMMAND = "python-asyncio"


if __name__ == "__main__":
    unittest.main()
