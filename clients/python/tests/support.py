"""Shared by the tests: the golden vectors (copies kept beside the tests), and a real HTTP server."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

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
