"""Golden vector files (TSV): `#` lines are comments, the last comment is the header, fields are
tab-separated, hex fields are lowercase, an empty first field is an empty key."""

from pathlib import Path

VECTORS_DIR = Path(__file__).resolve().parent.parent / "vectors"


def load(name: str) -> list[dict[str, str]]:
    header: list[str] = []
    rows = []
    for line in (VECTORS_DIR / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            header = line.lstrip("#").strip().split("\t")
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise ValueError(f"{name}: {len(fields)} fields, header has {len(header)}: {line!r}")
        rows.append(dict(zip(header, fields)))
    return rows
