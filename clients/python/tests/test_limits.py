"""The limits' relations are checked at import even under ``python -O``, which strips asserts."""

import os
import subprocess
import sys
import textwrap
import unittest

LIMITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "booblik", "limits.py")

# Runs limits.py with one relation broken; exit 0 only if the import refused it.
_BREAK_ONE = textwrap.dedent(
    """
    import sys
    assert False, "unreachable under -O"  # proves this process strips asserts
    source = open(sys.argv[1], encoding="utf-8").read()
    original, broken = sys.argv[2], sys.argv[3]
    if original not in source:
        sys.exit(f"limits.py no longer has {original!r}: update this test")
    try:
        exec(compile(source.replace(original, broken), "limits.py", "exec"), {"__name__": "limits"})
    except RuntimeError as refused:
        print(refused)
        sys.exit(0)
    sys.exit("a broken relation was accepted")
    """
)


class LimitsCheckedUnderOptimizeTest(unittest.TestCase):
    def test_a_broken_relation_fails_the_import_under_python_dash_o(self):
        cases = {
            "wait longer than the timeout": ("DEFAULT_MAX_WAIT_MILLIS = 5000", "DEFAULT_MAX_WAIT_MILLIS = 60000"),
            "min_bytes over max_bytes": ("DEFAULT_MIN_BYTES = 1", "DEFAULT_MIN_BYTES = 2 * 1024 * 1024"),
        }
        for what, (original, broken) in cases.items():
            with self.subTest(what):
                run = subprocess.run(
                    [sys.executable, "-O", "-c", _BREAK_ONE, LIMITS, original, broken],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertIn("booblik limits:", run.stdout)

    def test_the_limits_as_shipped_import_under_python_dash_o(self):
        run = subprocess.run(
            [sys.executable, "-O", "-c", "import booblik, booblik.aio"],
            cwd=os.path.dirname(os.path.dirname(LIMITS)),
            capture_output=True,
            text=True,
            timeout=30,
        )
        self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    unittest.main()
