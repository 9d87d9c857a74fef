"""Shared by the tests: the golden vectors (copies kept beside the tests), a real HTTP server, and
the real broker with its default topics."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading

VECTORS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")


def load_vectors(name: str) -> tuple[list, list]:
    """(header, rows) of a TSV: '#' lines are comments, the last comment is the header."""
    header: list = []
    rows = []
    with open(os.path.join(VECTORS_DIR, name), encoding="utf-8") as file:
        for line in file:
            line = line.rstrip("\n")
            if line.startswith("#"):
                header = line[1:].strip().split("\t")
            elif line:
                rows.append(dict(zip(header, line.split("\t"))))
    return header, rows


# A real HTTP server, the one the broker's own HTTP port runs on (Node's): it answers bytes that are
# not HTTP with "HTTP/1.1 400" at once, as a booblik client dialling that port by mistake sees.
_HTTP_SERVER_JS = """
const server = require('node:http').createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0)); // gone with the test that started it
process.stdin.resume();
"""

NODE = shutil.which("node")


@contextlib.contextmanager
def http_server():
    """Start a real HTTP server on a free port; yields its ``127.0.0.1:port``."""
    process = subprocess.Popen(
        [NODE, "-e", _HTTP_SERVER_JS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        port = process.stdout.readline().strip()  # printed once listening; blocks no longer than that
        if not port.isdigit():
            raise AssertionError(f"the HTTP server did not start (printed {port!r})")
        yield f"127.0.0.1:{port}"
    finally:
        process.stdin.close()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BROKER_ENTRY = os.path.join(REPO_ROOT, "packages", "broker", "dist", "main.js")
_LISTENING = re.compile(r"booblik listening on (\S+?):(\d+)\b")


@contextlib.contextmanager
def default_broker(timeout: float = 30.0):
    """The broker as `npm start` runs it with no flags (its default topics), but on a free port, with
    HTTP off and a data directory of its own; yields its ``host:port``. Needs the built broker."""
    data_dir = tempfile.mkdtemp(prefix="booblik-readme-")
    # Only our variables: a caller's BOOBLIK_TOPICS would change the very defaults under test.
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOBLIK_")}
    env.update(BOOBLIK_PORT="0", BOOBLIK_HTTP_PORT="-1", BOOBLIK_DATA_DIR=data_dir)
    process = subprocess.Popen(
        [NODE, BROKER_ENTRY],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    found: list = []
    listening = threading.Event()

    def read_output():  # drains the log for the broker's whole life, so it never blocks on a full pipe
        for line in process.stdout:
            match = _LISTENING.search(line)
            if match and not found:
                found.append(f"{match.group(1)}:{match.group(2)}")
                listening.set()
        listening.set()  # output ended: the broker exited

    reader = threading.Thread(target=read_output, daemon=True)
    reader.start()
    try:
        if not listening.wait(timeout) or not found:
            raise AssertionError(f"the broker did not start within {timeout} s (exit status {process.poll()})")
        yield found[0]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(5)
        process.stdout.close()
        shutil.rmtree(data_dir, ignore_errors=True)
