"""The harness's own codec for the topic APIs (docs/protocol.md, "Additions after v1"), written apart
from every client like harness/wire.py.

    APPLY request v1  => dryRun:int8 changeCount:int32 change*
      change          => op:int8 (1 upsert => TopicSpec | 2 delete => name:string expectedRevision:int64)
    APPLY response v1 => revision:int64
    LIST request v1   => selector:string watchRevision:int64 maxWaitMillis:int32
    LIST response v1  => revision:int64 topicCount:int32 (TopicSpec routeCount:int32 Route*)*
    TopicSpec         => name:string partitions:int32 labelCount:int32 (key:string value:string)*
                         retentionBytes:int64 retentionMillis:int64 segmentBytes:int32 flags:int32
                         replication:int16 storeUrl:string revision:int64
    Route             => primary:string replicaCount:int32 replica:string*
"""

import struct
from dataclasses import dataclass

from .wire import ProtocolError, Reader, string

API_APPLY = 4
API_LIST = 5
ANY_REVISION = -1
MUST_NOT_EXIST = 0
# APPLY sentinels for "the broker's configured value".
DEFAULT_RETENTION = -2
DEFAULT_SEGMENT_BYTES = 0
DEFAULT_REPLICATION = 0


@dataclass(frozen=True)
class Listed:
    """A listed topic, as much of it as the checks compare."""

    name: str
    partitions: int
    labels: dict
    revision: int


def upsert(name: str, partitions: int, labels: dict, expected_revision: int) -> bytes:
    parts = [b"\x01", string(name), struct.pack(">ii", partitions, len(labels))]
    for key in sorted(labels):
        parts.append(string(key) + string(labels[key]))
    parts.append(struct.pack(">qqiih", DEFAULT_RETENTION, DEFAULT_RETENTION, DEFAULT_SEGMENT_BYTES, 0,
                             DEFAULT_REPLICATION))
    parts.append(string("") + struct.pack(">q", expected_revision))
    return b"".join(parts)


def delete(name: str, expected_revision: int) -> bytes:
    return b"\x02" + string(name) + struct.pack(">q", expected_revision)


def apply_v1(changes: list[bytes], dry_run: bool = False) -> bytes:
    return struct.pack(">bi", 1 if dry_run else 0, len(changes)) + b"".join(changes)


def list_v1(selector: str, watch_revision: int = -1, max_wait_ms: int = 0) -> bytes:
    return string(selector) + struct.pack(">qi", watch_revision, max_wait_ms)


def parse_apply_body(body: bytes) -> int:
    reader = Reader(body, "APPLY response")
    revision = reader.unpack(">q", "revision")
    if reader.remaining:
        raise ProtocolError(f"APPLY response: {reader.remaining} bytes after the revision")
    return revision


def parse_list_body(body: bytes) -> tuple[int, list[Listed]]:
    reader = Reader(body, "LIST response")
    revision, count = reader.unpack(">qi", "revision topicCount")
    topics = []
    for index in range(count):
        name = reader.string(f"topic {index} name")
        partitions, label_count = reader.unpack(">ii", f"topic {index} partitions labelCount")
        labels = {}
        for _ in range(label_count):
            key = reader.string(f"topic {index} label key")
            labels[key] = reader.string(f"topic {index} label value")
        reader.take(8 + 8 + 4 + 4 + 2, f"topic {index} retention, segment, flags, replication")
        reader.string(f"topic {index} storeUrl")
        spec_revision = reader.unpack(">q", f"topic {index} revision")
        for route in range(reader.unpack(">i", f"topic {index} routeCount")):
            reader.string(f"topic {index} route {route} primary")
            for replica in range(reader.unpack(">i", f"topic {index} route {route} replicaCount")):
                reader.string(f"topic {index} route {route} replica {replica}")
        topics.append(Listed(name, partitions, labels, spec_revision))
    if reader.remaining:
        raise ProtocolError(f"LIST response: {reader.remaining} bytes after the last topic")
    return revision, topics

