"""The README's examples run, in order, against the fake broker (its address swapped in), which has
the topics of the broker `npm start` runs with no flags: "default", one partition."""

import contextlib
import io
import os
import re
import unittest

from tests.fakebroker import FakeBroker

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


class ReadmeExamplesTest(unittest.TestCase):
    def test_every_python_example_runs(self):
        with open(README, encoding="utf-8") as file:
            blocks = python_blocks(file.read())
        self.assertGreaterEqual(len(blocks), 6)
        with FakeBroker({"default": 1}) as broker:
            for index, block in enumerate(blocks):
                with self.subTest(block=index, first_line=block.splitlines()[0]):
                    code = block.replace("localhost:9092", broker.address)
                    out = io.StringIO()
                    with contextlib.redirect_stdout(out):
                        exec(compile(code, f"README.md example {index}", "exec"), {"__name__": "readme"})


if __name__ == "__main__":
    unittest.main()
