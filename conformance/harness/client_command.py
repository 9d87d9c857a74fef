"""Runs a client under test: `<command> <verb> [args...]` with BOOBLIK_BROKER in the environment.

The client prints `key=value` lines on stdout (a key printed several times is a list); exit 0 means
the verb was carried out, a broker refusal included (printed as `error=<CODE_NAME>`).
"""

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

VERB_TIMEOUT_S = 20.0  # the contract gives each verb 20 seconds
OUTPUT_TAIL_CHARS = 300  # how much of a client's stderr a failure message quotes


@dataclass
class VerbResult:
    argv: list[str]
    exit_code: int | None  # None when the harness killed the client at its time limit
    timed_out: bool
    elapsed_s: float
    stdout: str
    stderr: str
    values: dict[str, list[str]] = field(default_factory=dict)

    def all(self, key: str) -> list[str]:
        return self.values.get(key, [])

    @property
    def command_line(self) -> str:
        shown = [arg if len(arg) <= 40 else arg[:37] + "..." for arg in self.argv]
        return " ".join(a if a else '""' for a in shown)

    def describe(self) -> str:
        """A one-line account of how the verb ended, for failure messages."""
        if self.timed_out:
            how = f"did not finish within {self.elapsed_s:.0f} s"
        else:
            how = f"exited {self.exit_code} after {self.elapsed_s:.1f} s"
        printed = ", ".join(f"{k}={v if len(v) <= 24 else v[:21] + '...'}"
                            for k, vs in self.values.items() for v in vs)
        text = f"`{self.command_line}` {how}; printed [{printed[:200]}]"
        stderr = " ".join(self.stderr.split())
        if stderr:
            text += f"; stderr: ...{stderr[-OUTPUT_TAIL_CHARS:]}"
        return text


def parse_output(stdout: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        key, sep, value = line.rstrip("\r").partition("=")
        if sep and key and " " not in key:
            values.setdefault(key, []).append(value)
    return values


class ClientCommand:
    def __init__(
        self,
        argv: list[str],
        broker_address: str,
        cwd: str | None = None,
        verb_timeout_s: float = VERB_TIMEOUT_S,
    ):
        self.argv = list(argv)
        self.broker_address = broker_address
        self.cwd = cwd
        self.verb_timeout_s = verb_timeout_s

    def at(self, broker_address: str) -> "ClientCommand":
        """The same client, pointed at another broker (the harness's rogue one)."""
        return ClientCommand(self.argv, broker_address, self.cwd, self.verb_timeout_s)

    def run(self, verb: str, *args: str) -> VerbResult:
        argv = [*self.argv, verb, *args]
        env = dict(os.environ, BOOBLIK_BROKER=self.broker_address)
        started = time.monotonic()
        # A process group of its own, so a client that hangs is killed with every process it started.
        proc = subprocess.Popen(
            argv,
            cwd=self.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        timed_out = False
        try:
            stdout, stderr = proc.communicate(timeout=self.verb_timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                stdout, stderr = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                # Something outside the group still holds the pipes: give up on the rest of its output.
                proc.kill()
                proc.wait()
                stdout, stderr = b"", b""
        elapsed = time.monotonic() - started
        out = stdout.decode("utf-8", errors="replace")
        return VerbResult(
            argv=argv[len(self.argv) :],
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            elapsed_s=elapsed,
            stdout=out,
            stderr=stderr.decode("utf-8", errors="replace"),
            values=parse_output(out),
        )
