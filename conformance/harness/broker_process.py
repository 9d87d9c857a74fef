"""Starts a broker for a conformance run and stops it afterwards.

The broker runs from the repository root as `node packages/broker/dist/main.js` with port 0 (it
picks a free one), the two conformance topics and a fresh data directory; it reports where it
listens with a line containing `booblik listening on <host>:<port>`, on stdout or stderr.
"""

import collections
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

BROKER_ENTRY = Path("packages") / "broker" / "dist" / "main.js"
TOPICS = "conformance:3,single:1"
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 10.0  # SIGTERM first (graceful shutdown flushes), SIGKILL after this
LOG_TAIL_LINES = 40  # what is shown when the broker fails to start

# The address may sit in a plain line or inside a structured (JSON) log line, so it ends at
# whitespace, a quote, a comma or a closing bracket.
LISTENING = re.compile(r"booblik listening on (\[[0-9A-Fa-f:.]+\]|[^\s:\"',;()\[\]]+):(\d+)")
WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]", "*"}


class BrokerError(Exception):
    """The broker could not be started (or was not built)."""


def connectable(host: str, port: str) -> str:
    """host:port a client can dial; a wildcard listener is reached on the loopback address."""
    return f"{'127.0.0.1' if host in WILDCARD_HOSTS else host}:{port}"


class BrokerProcess:
    def __init__(self, argv: list[str], cwd: Path, log_path: Path | None = None):
        self.argv = argv
        self.cwd = cwd
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.data_dir: str | None = None
        self.address: str | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=LOG_TAIL_LINES)
        self.announced = threading.Event()  # set on the listening line, or when output ends
        self.reader: threading.Thread | None = None

    @classmethod
    def for_repo(cls, repo_root: Path, log_path: Path | None = None) -> "BrokerProcess":
        if not (repo_root / BROKER_ENTRY).is_file():
            raise BrokerError(f"{BROKER_ENTRY} not found under {repo_root}: the broker must be "
                              f"built first (`npx tsc -b` at the repository root)")
        return cls(["node", str(BROKER_ENTRY)], repo_root, log_path)

    def start(self, timeout_s: float = START_TIMEOUT_S) -> str:
        self.data_dir = tempfile.mkdtemp(prefix="booblik-conformance-")
        # Only the variables we set: a broker refuses unknown BOOBLIK_* keys, and a stray
        # BOOBLIK_BROKER from the caller's shell must not reach it.
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOOBLIK_")}
        env.update(BOOBLIK_PORT="0", BOOBLIK_TOPICS=TOPICS, BOOBLIK_DATA_DIR=self.data_dir,
                   BOOBLIK_HTTP_PORT="0")
        try:
            self.proc = subprocess.Popen(self.argv, cwd=self.cwd, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except OSError as error:
            self._remove_data_dir()
            raise BrokerError(f"cannot run {' '.join(self.argv)}: {error}") from error
        self.reader = threading.Thread(target=self._read_output, daemon=True)
        self.reader.start()
        output_ended = self.announced.wait(timeout_s) and self.address is None
        if self.address is None:
            if output_ended:  # most likely the broker exited: wait for its status to tell why
                try:
                    self.proc.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    pass
            code = self.proc.poll()
            why = (f"exited with {code}" if code is not None
                   else f"printed no 'booblik listening on <host>:<port>' line in {timeout_s:.0f} s")
            log = "\n".join(f"  | {line}" for line in self.tail)
            self.stop()
            raise BrokerError(f"the broker {why}; its last output:\n{log or '  | (none)'}")
        return self.address

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after the grace period; removes the data directory. Exit status."""
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            code = self.proc.returncode
            if self.reader is not None:
                self.reader.join(STOP_GRACE_S)
            self.proc.stdout.close()
        self._remove_data_dir()
        return code

    def last_output(self) -> list[str]:
        return list(self.tail)

    def _remove_data_dir(self) -> None:
        if self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def _read_output(self) -> None:
        # Drained until the end, so a chatty broker never blocks on a full pipe.
        log = open(self.log_path, "a", encoding="utf-8") if self.log_path else None
        try:
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                self.tail.append(line)
                if log:
                    log.write(line + "\n")
                    log.flush()
                if self.address is None:
                    match = LISTENING.search(line)
                    if match:
                        self.address = connectable(*match.groups())
                        self.announced.set()
        finally:
            if log:
                log.close()
            self.announced.set()
