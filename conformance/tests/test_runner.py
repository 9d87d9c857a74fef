"""The runner: starting and stopping a broker, finding registered clients, and the exit status and
last line a CI step reads."""

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.broker_process import LISTENING, BrokerError, BrokerProcess, connectable

from . import support

RUN_PY = support.TESTS_DIR.parent / "run.py"
FAKE_BROKER = [sys.executable, str(support.TESTS_DIR / "fake_broker.py")]


def load_runner():
    spec = importlib.util.spec_from_file_location("conformance_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ListeningLine(unittest.TestCase):
    def address(self, line):
        match = LISTENING.search(line)
        return connectable(*match.groups()) if match else None

    def test_plain_and_structured_lines(self):
        self.assertEqual(self.address("booblik listening on 127.0.0.1:9092"), "127.0.0.1:9092")
        self.assertEqual(self.address('{"level":"info","msg":"booblik listening on 127.0.0.1:41'
                                      '007","http":"127.0.0.1:9100"}'), "127.0.0.1:41007")
        self.assertEqual(self.address("booblik listening on localhost:5, http on 8080"),
                         "localhost:5")

    def test_a_wildcard_listener_is_dialled_on_loopback(self):
        self.assertEqual(self.address("booblik listening on 0.0.0.0:7000"), "127.0.0.1:7000")
        self.assertEqual(self.address("booblik listening on [::]:7000"), "127.0.0.1:7000")
        self.assertEqual(self.address("booblik listening on [::1]:7000"), "[::1]:7000")

    def test_other_lines_do_not_match(self):
        self.assertIsNone(self.address("booblik starting on port 0"))


class StartingTheBroker(unittest.TestCase):
    def test_start_reads_the_address_and_stop_cleans_up(self):
        broker = BrokerProcess(FAKE_BROKER, support.TESTS_DIR)
        address = broker.start()
        data_dir = broker.data_dir
        self.assertTrue(address.startswith("127.0.0.1:"))
        self.assertTrue(os.path.isdir(data_dir))
        self.assertTrue(broker.alive())
        self.assertEqual(broker.stop(), 0)  # SIGTERM, answered by a clean exit
        self.assertFalse(os.path.exists(data_dir))

    def test_an_unbuilt_broker_is_a_clear_error(self):
        with tempfile.TemporaryDirectory() as root:
            with self.assertRaisesRegex(BrokerError, r"must be built first \(`npx tsc -b`"):
                BrokerProcess.for_repo(Path(root))

    def test_a_broker_that_exits_at_once_is_reported_with_its_output(self):
        broker = BrokerProcess([sys.executable, "-c", "print('bad key BOOBLIK_X'); exit(3)"],
                               support.TESTS_DIR)
        with self.assertRaisesRegex(BrokerError, r"exited with 3(.|\n)*bad key BOOBLIK_X"):
            broker.start()
        self.assertIsNone(broker.data_dir)

    def test_a_broker_that_never_says_where_it_listens_is_stopped(self):
        broker = BrokerProcess([sys.executable, "-c", "import signal; signal.pause()"],
                               support.TESTS_DIR)
        with self.assertRaisesRegex(BrokerError, "printed no 'booblik listening on"):
            broker.start(timeout_s=0.5)
        self.assertFalse(broker.alive())


class Runner(unittest.TestCase):
    def setUp(self):
        self.runner = load_runner()
        self.clients_dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.clients_dir)

    def register(self, name: str, flaw: str | None = None, executable: bool = True) -> None:
        path = self.clients_dir / name
        path.write_text(f"#!/bin/sh\nexec {shlex.join(support.reference(flaw))} \"$@\"\n")
        path.chmod(0o755 if executable else 0o644)

    def main(self, *argv):
        report = support.Report()
        code = self.runner.main(["--clients-dir", str(self.clients_dir), *argv], report,
                                broker_command=FAKE_BROKER)
        return code, report

    def test_runs_every_registered_client_against_a_broker_it_starts(self):
        self.register("alpha")
        self.register("beta", "producer-only")
        self.register("README.md", executable=False)
        code, report = self.main("--only", "B1,1,10")
        self.assertEqual(code, 0, report)
        self.assertIn("== alpha ==", report.lines)
        self.assertIn("== beta ==", report.lines)
        self.assertIn("beta: 1 passed, 0 failed", report.lines)
        self.assertEqual(report.lines[-1], "4 passed, 0 failed")

    def test_picks_clients_by_name(self):
        self.register("alpha")
        self.register("beta", "metadata-drops-last")
        code, report = self.main("alpha", "--only", "1")
        self.assertEqual((code, report.lines[-1]), (0, "1 passed, 0 failed"), report)
        self.assertNotIn("== beta ==", report.lines)

    def test_a_failing_client_fails_the_run(self):
        self.register("beta", "metadata-drops-last")
        code, report = self.main("--only", "1")
        self.assertEqual((code, report.lines[-1]), (1, "0 passed, 1 failed"), report)

    def test_no_registered_client_fails_the_run(self):
        code, report = self.main()
        self.assertEqual(code, 1)
        self.assertIn("no client registered", str(report))
        self.assertEqual(report.lines[-1], "0 passed, 1 failed")

    def test_an_unknown_client_name_fails_the_run(self):
        self.register("alpha")
        code, report = self.main("gamma")
        self.assertEqual(code, 1)
        self.assertIn("no registered client named gamma (registered: alpha)", str(report))


class CommandLine(unittest.TestCase):
    def test_the_reference_client_passes_through_run_py_against_a_running_broker(self):
        broker = support.started_broker(self)
        proc = subprocess.run(
            [sys.executable, str(RUN_PY), "--broker", broker.address,
             "--client", shlex.join(support.reference())],
            capture_output=True, text=True, timeout=300,
        )
        lines = proc.stdout.splitlines()
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertRegex(lines[-1], r"^\d+ passed, 0 failed$")
        self.assertEqual(sum(1 for line in lines if line.startswith("PASS ")),
                         int(lines[-1].split()[0]))


if __name__ == "__main__":
    unittest.main()
