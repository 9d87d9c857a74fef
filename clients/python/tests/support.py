"""Shared by the tests: the golden vectors (copies kept beside the tests)."""

from __future__ import annotations

import os

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
