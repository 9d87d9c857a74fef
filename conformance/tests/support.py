"""Shared pieces of the self-tests: a fake broker per test, the reference client's command line,
and a suite run that keeps its report lines."""

import sys
from pathlib import Path

from harness import suite

from .fake_broker import FakeBroker

TESTS_DIR = Path(__file__).resolve().parent
REFERENCE_CLIENT = TESTS_DIR / "reference_client.py"


def reference(flaw: str | None = None) -> list[str]:
    argv = [sys.executable, str(REFERENCE_CLIENT)]
    return argv + ["--flaw", flaw] if flaw else argv


class Report:
    """Collects the suite's output lines."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    def __str__(self) -> str:
        return "\n".join(self.lines)


def run_client(broker: FakeBroker, argv: list[str], only=None, verb_timeout_s=20.0):
    report = Report()
    tally = suite.run_client(argv, broker.address, report, only=only,
                             verb_timeout_s=verb_timeout_s)
    return tally, report


def started_broker(test, **kwargs) -> FakeBroker:
    broker = FakeBroker(**kwargs)
    broker.start()
    test.addCleanup(broker.stop)
    return broker
