"""The fake broker's spec store: APPLY and LIST (with watch), and the spec bytes both carry.

``SpecStore`` is mixed into ``FakeBroker``, whose state (``specs``, ``revision``, ``topics``,
``logs``, ``_cond``, ``_waiting``) it reads and changes under ``_cond``.
"""

from __future__ import annotations

import struct

from tests.fakebroker_wire import (
    INVALID_ARGUMENT,
    REVISION_MISMATCH,
    Decoder,
    Request,
    response_frame,
    string_bytes,
)


class SpecStore:
    def _apply(self, request: Request, d: Decoder) -> bytes:
        f = request.fields
        f["dry_run"] = d.take(">b")
        count = d.take(">i")
        changes = []
        for _ in range(count):
            op = d.take(">b")
            if op == 1:
                changes.append(dict(op="upsert", **read_spec(d)))
            elif op == 2:
                changes.append(dict(op="delete", name=d.string(), revision=d.take(">q")))
            else:
                raise ValueError(f"op {op}")
        if d.pos != len(d.payload):
            raise ValueError("bytes after the last change")
        f["changes"] = changes
        cid = request.correlation_id
        with self._cond:
            for index, change in enumerate(changes):
                name = change["name"]
                current = self.specs.get(name)
                actual = current["revision"] if current else 0
                expected = change["revision"]
                if expected != -1 and expected != actual:
                    encoded = name.encode("utf-8")
                    detail = struct.pack(">iH", index, len(encoded)) + encoded + struct.pack(">qq", expected, actual)
                    return response_frame(cid, REVISION_MISMATCH, detail)
                if change["op"] == "upsert":
                    problem = None
                    if not 1 <= change["partitions"] <= 10_000:
                        problem = f"changes[{index}].partitions: {change['partitions']}, expected 1..10000"
                    elif current and change["partitions"] < current["partitions"]:
                        problem = (
                            f"changes[{index}].partitions: {change['partitions']}, expected >= {current['partitions']}"
                        )
                    if problem:
                        message = problem.encode("utf-8")
                        return response_frame(cid, INVALID_ARGUMENT, struct.pack(">iH", index, len(message)) + message)
            # An APPLY that changes nothing (only deletes of missing topics) keeps the revision.
            changes_something = any(c["op"] == "upsert" or c["name"] in self.specs for c in changes)
            if f["dry_run"] or not changes_something:
                return response_frame(cid, 0, struct.pack(">q", self.revision))
            self.revision += 1
            for change in changes:
                name = change["name"]
                if change["op"] == "delete":
                    self.specs.pop(name, None)
                    for p in range(self.topics.pop(name, 0)):
                        del self.logs[(name, p)]
                    continue
                spec = stored_spec(name, change["partitions"], change["labels"], self.revision, change)
                self.specs[name] = spec
                for p in range(self.topics.get(name, 0), spec["partitions"]):
                    self.logs[(name, p)] = []
                self.topics[name] = spec["partitions"]
            self._cond.notify_all()
            return response_frame(cid, 0, struct.pack(">q", self.revision))

    def _list(self, request: Request, d: Decoder) -> bytes:
        f = request.fields
        f["selector"] = d.string()
        f["watch_revision"] = d.take(">q")
        f["max_wait_millis"] = d.take(">i")
        cid = request.correlation_id
        requirements = parse_selector(f["selector"])
        if requirements is None:
            message = f"selector {f['selector']!r}: the fake broker knows k=v, k!=v, k and !k".encode()
            return response_frame(cid, INVALID_ARGUMENT, struct.pack(">iH", -1, len(message)) + message)
        watch = f["watch_revision"]
        with self._cond:
            if watch >= 0 and self.revision <= watch:
                self._waiting += 1
                self._cond.notify_all()
                moved = self._cond.wait_for(
                    lambda: self._closing or self.revision > watch, min(f["max_wait_millis"], 60_000) / 1000
                )
                self._waiting -= 1
                if not moved or self._closing:
                    return response_frame(cid, 0, struct.pack(">qi", watch, 0))
            chosen = [s for n, s in sorted(self.specs.items()) if matches(requirements, n, s["labels"])]
            body = bytearray(struct.pack(">qi", self.revision, len(chosen)))
            for spec in chosen:
                body += spec_bytes(spec) + struct.pack(">i", spec["partitions"])
                for p in range(spec["partitions"]):
                    if request.api_version == 2:  # LIST never knows the lags
                        body += self._route_v2_bytes((spec["name"], p), lags_known=False)
                    else:
                        body += string_bytes(self.address) + struct.pack(">i", 0)
        return response_frame(cid, 0, bytes(body))


def read_spec(d: Decoder) -> dict:
    spec = {"name": d.string(), "partitions": d.take(">i")}
    labels = {}
    for _ in range(d.take(">i")):
        key = d.string()
        labels[key] = d.string()
    spec["labels"] = labels
    for key, fmt in (
        ("retention_bytes", ">q"),
        ("retention_millis", ">q"),
        ("segment_bytes", ">i"),
        ("flags", ">i"),
        ("replication", ">h"),
    ):
        spec[key] = d.take(fmt)
    spec["store_url"] = d.string()
    spec["revision"] = d.take(">q")
    return spec


def stored_spec(name: str, partitions: int, labels: dict, revision: int, asked: dict | None = None) -> dict:
    """A spec as the broker stores it: as applied, the default sentinels (-2, 0) kept."""
    asked = asked or {}
    return {
        "name": name,
        "partitions": partitions,
        "labels": dict(labels),
        "retention_bytes": asked.get("retention_bytes", -2),
        "retention_millis": asked.get("retention_millis", -2),
        "segment_bytes": asked.get("segment_bytes", 0),
        "flags": asked.get("flags", 0),
        "replication": asked.get("replication", 0),
        "store_url": asked.get("store_url", ""),
        "revision": revision,
    }


def spec_bytes(spec: dict) -> bytes:
    out = bytearray(string_bytes(spec["name"]) + struct.pack(">ii", spec["partitions"], len(spec["labels"])))
    for key in sorted(spec["labels"]):
        out += string_bytes(key) + string_bytes(spec["labels"][key])
    out += struct.pack(
        ">qqiih", spec["retention_bytes"], spec["retention_millis"], spec["segment_bytes"], spec["flags"],
        spec["replication"],
    )
    return bytes(out + string_bytes(spec["store_url"]) + struct.pack(">q", spec["revision"]))


def parse_selector(selector: str):
    """A list of (key, op, value) for k=v, k!=v, k and !k joined by commas; None for anything else."""
    requirements = []
    for part in (p.strip() for p in selector.split(",")) if selector.strip() else ():
        if "!=" in part:
            key, value = (x.strip() for x in part.split("!=", 1))
            requirements.append((key, "!=", value))
        elif "=" in part:
            key, value = (x.strip() for x in part.split("=", 1))
            requirements.append((key, "=", value))
        elif part.startswith("!"):
            requirements.append((part[1:].strip(), "!", None))
        else:
            requirements.append((part, "", None))
        if not requirements[-1][0] or " " in requirements[-1][0] or "(" in part:
            return None
    return requirements


def matches(requirements: list, name: str, labels: dict) -> bool:
    for key, op, value in requirements:
        have = name if key == "name" else labels.get(key)
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op == "" and have is None:
            return False
        if op == "!" and have is not None:
            return False
    return True
