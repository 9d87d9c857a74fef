"""The README's examples run, in order, against the fake broker (its address swapped in), which has
the topics of the broker `npm start` runs with no flags: "default", one partition."""

import contextlib
import io
import os
import re
import unittest

from tests.fakebroker import FakeBroker
from tests.support import BROKER_ENTRY, NODE, default_broker

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


class ReadmeExamplesTest(unittest.TestCase):
    def run_examples(self, address):
        with open(README, encoding="utf-8") as file:
            blocks = python_blocks(file.read())
        self.assertGreaterEqual(len(blocks), 6)
        for index, block in enumerate(blocks):
            with self.subTest(block=index, first_line=block.splitlines()[0]):
                code = block.replace("localhost:9092", address)
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(code, f"README.md example {index}", "exec"), {"__name__": "readme"})

    def test_every_python_example_runs(self):
        with FakeBroker({"default": 1}) as broker:
            self.run_examples(broker.address)

    @unittest.skipUnless(NODE and os.path.exists(BROKER_ENTRY), "the broker is not built (npx tsc -b at the root)")
    def test_every_python_example_runs_against_the_broker_npm_start_runs(self):
        with default_broker() as address:
            self.run_examples(address)


if __name__ == "__main__":
    unittest.main()
