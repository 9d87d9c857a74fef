"""Topics at runtime: the spec, the changes APPLY takes, what LIST answers, and their codec.

    TopicSpec => name:string partitions:int32 labelCount:int32 [key:string value:string]*labelCount
                 retentionBytes:int64 retentionMillis:int64 segmentBytes:int32 flags:int32
                 replication:int16 storeUrl:string revision:int64
    APPLY request v1 => dryRun:int8 changeCount:int32 [change]*changeCount
      change => op:int8 (1 upsert => spec:TopicSpec | 2 delete => name:string expectedRevision:int64)
    APPLY response v1 => revision:int64
    LIST request v1  => selector:string watchRevision:int64 maxWaitMillis:int32
    LIST response v1 => revision:int64 topicCount:int32
      [spec:TopicSpec routeCount:int32 [route:Route]*routeCount]*topicCount
    Route => primary:string replicaCount:int32 [replica:string]*replicaCount

Every spec carries a revision: in an APPLY upsert the one the change expects (``REVISION_MUST_NOT_EXIST``
0, ``REVISION_ANY`` -1, or N: must be at N), in a LIST answer the spec store's revision of its last
change. The broker checks every value and names the field it refuses (InvalidArgumentRefusal);
this module refuses only what cannot go on the wire, with a ValueError or TypeError naming the field.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import limits
from .errors import ProtocolError
from .wire import BodyReader, check_int, encode_string

# Expected revisions besides an exact N.
REVISION_MUST_NOT_EXIST = 0
REVISION_ANY = -1
# APPLY sentinels for "the broker's configured value"; the spec keeps them (LIST shows them) and the
# broker resolves them whenever it opens the partitions, so a changed setting reaches the topic.
RETENTION_DEFAULT = -2
RETENTION_UNLIMITED = -1
SEGMENT_BYTES_DEFAULT = 0
REPLICATION_DEFAULT = 0
# Spec flags. PRODUCE to a read-only topic is refused with TOPIC_READ_ONLY; FETCH still serves it.
FLAG_READ_ONLY = 1
# LIST's watchRevision that asks for no watch: answer at once.
NO_WATCH = -1

_OP_UPSERT = 1
_OP_DELETE = 2
# The smallest TopicSpec on the wire (empty strings, no labels), and the smallest listed topic.
_SPEC_BYTES_MIN = 2 + 4 + 4 + 8 + 8 + 4 + 4 + 2 + 2 + 8
_LISTED_TOPIC_BYTES_MIN = _SPEC_BYTES_MIN + 4
_ROUTE_BYTES_MIN = 2 + 4
_LABEL_BYTES_MIN = 2 + 2

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


@dataclass
class TopicSpec:
    """One topic's spec. Only ``name`` and ``partitions`` are needed; every other field defaults to
    what the broker is configured with (or, for ``revision``, to "whatever it is now")."""

    name: str
    partitions: int  # 1 .. 10000; an existing topic's may grow, never shrink
    labels: dict = field(default_factory=dict)  # str -> str, for selectors (team=payments)
    retention_bytes: int = RETENTION_DEFAULT  # -1 unlimited
    retention_millis: int = RETENTION_DEFAULT  # -1 unlimited
    segment_bytes: int = SEGMENT_BYTES_DEFAULT
    flags: int = 0  # FLAG_READ_ONLY
    replication: int = REPLICATION_DEFAULT  # copies of each partition; a single broker keeps 1
    store_url: str = ""  # where the cluster keeps fragments; empty on a single broker
    revision: int = REVISION_ANY

    @property
    def read_only(self) -> bool:
        return bool(self.flags & FLAG_READ_ONLY)


@dataclass(frozen=True)
class Upsert:
    """Create the topic, or replace its spec; ``spec.revision`` is the revision expected."""

    spec: TopicSpec


@dataclass(frozen=True)
class Delete:
    """Delete the topic (with REVISION_ANY, a topic that does not exist is no change)."""

    name: str
    expected_revision: int = REVISION_ANY


@dataclass(frozen=True)
class Route:
    """Who serves a partition: the primary's ``host:port`` (empty when it has none), and the replicas'."""

    primary: str
    replicas: tuple = ()


@dataclass(frozen=True)
class ListedTopic:
    spec: TopicSpec
    routes: tuple  # tuple[Route], one per partition, by id
    # tuple[RouteV2] (booblik.route_v2), one per partition, when the listing asked for replicas (LIST v2)
    routes_v2: tuple | None = None


@dataclass(frozen=True)
class TopicListing:
    revision: int  # the spec store's revision this listing is at
    topics: list  # list[ListedTopic], sorted by name

    def names(self) -> list:
        return [t.spec.name for t in self.topics]


# -- the spec --


def encode_spec(where: str, spec: TopicSpec) -> bytes:
    if not isinstance(spec, TopicSpec):
        raise TypeError(f"{where}: expected a TopicSpec, got {type(spec).__name__}")
    if not isinstance(spec.labels, dict):
        raise TypeError(f"{where}.labels: expected a dict of str to str, got {type(spec.labels).__name__}")
    parts = [
        encode_string(f"{where}.name", spec.name),
        _I32.pack(check_int(f"{where}.partitions", spec.partitions, 1, limits.TOPIC_PARTITIONS_MAX)),
        _I32.pack(len(spec.labels)),
    ]
    for key in sorted(spec.labels, key=_sort_key(where)):  # labels travel sorted by key
        parts.append(encode_string(f"{where}.labels key", key))
        parts.append(encode_string(f"{where}.labels[{key!r}]", spec.labels[key]))
    parts += [
        _I64.pack(check_int(f"{where}.retention_bytes", spec.retention_bytes, RETENTION_DEFAULT, limits.INT64_MAX)),
        _I64.pack(check_int(f"{where}.retention_millis", spec.retention_millis, RETENTION_DEFAULT, limits.INT64_MAX)),
        _I32.pack(check_int(f"{where}.segment_bytes", spec.segment_bytes, 0, limits.INT32_MAX)),
        _I32.pack(check_int(f"{where}.flags", spec.flags, 0, limits.INT32_MAX)),
        _I16.pack(check_int(f"{where}.replication", spec.replication, 0, limits.INT16_MAX)),
        encode_string(f"{where}.store_url", spec.store_url),
        _I64.pack(check_int(f"{where}.revision", spec.revision, REVISION_ANY, limits.INT64_MAX)),
    ]
    return b"".join(parts)


def _sort_key(where: str):
    def key_bytes(key) -> bytes:
        if not isinstance(key, str):
            raise TypeError(f"{where}.labels: key {key!r} is a {type(key).__name__}, expected str")
        return key.encode("utf-8")  # the broker sorts by code unit; for label keys (ASCII) the same

    return key_bytes


def decode_spec(reader: BodyReader, where: str) -> TopicSpec:
    name = reader.string(f"{where}.name")
    partitions = reader.i32(f"{where}.partitions")
    label_count = reader.i32(f"{where}.labelCount")
    if not 0 <= label_count <= (len(reader.body) - reader.pos) // _LABEL_BYTES_MIN:
        raise ProtocolError(f"{reader.what}: {where}.labelCount {label_count} does not fit the bytes left")
    labels = {}
    for index in range(label_count):
        key = reader.string(f"{where}.labels[{index}].key")
        if key in labels:
            raise ProtocolError(f"{reader.what}: {where}.labels[{index}].key {key!r} twice")
        labels[key] = reader.string(f"{where}.labels[{index}].value")
    return TopicSpec(
        name=name,
        partitions=partitions,
        labels=labels,
        retention_bytes=reader.i64(f"{where}.retentionBytes"),
        retention_millis=reader.i64(f"{where}.retentionMillis"),
        segment_bytes=reader.i32(f"{where}.segmentBytes"),
        flags=reader.i32(f"{where}.flags"),
        replication=reader.i16(f"{where}.replication"),
        store_url=reader.string(f"{where}.storeUrl"),
        revision=reader.i64(f"{where}.revision"),
    )


# -- APPLY v1 --


def encode_apply_request(changes: Iterable, dry_run: bool = False) -> bytes:
    if isinstance(changes, (Upsert, Delete)):
        raise TypeError("changes: expected a list of Upsert and Delete, got a single change; wrap it in a list")
    changes = list(changes)
    if not isinstance(dry_run, bool):
        raise TypeError(f"dry_run: expected a bool, got {type(dry_run).__name__}")
    check_int("changes", len(changes), 0, limits.APPLY_CHANGES_MAX)
    parts = [_I8.pack(1 if dry_run else 0), _I32.pack(len(changes))]
    for index, change in enumerate(changes):
        where = f"changes[{index}]"
        if isinstance(change, Upsert):
            parts.append(_I8.pack(_OP_UPSERT) + encode_spec(f"{where}.spec", change.spec))
        elif isinstance(change, Delete):
            parts.append(_I8.pack(_OP_DELETE))
            parts.append(encode_string(f"{where}.name", change.name))
            revision = check_int(f"{where}.expected_revision", change.expected_revision, REVISION_ANY, limits.INT64_MAX)
            parts.append(_I64.pack(revision))
        else:
            raise TypeError(f"{where}: expected Upsert or Delete, got {type(change).__name__}")
    return b"".join(parts)


def decode_apply_response(body: bytes) -> int:
    reader = BodyReader("APPLY response", body)
    revision = reader.i64("revision")
    reader.end()
    if revision < 0:
        raise ProtocolError(f"APPLY response: revision {revision}, expected >= 0")
    return revision


# An APPLY's label in errors names this many changes, then counts the rest: one line, however many.
_LABEL_CHANGES_MAX = 3


def describe_apply(changes) -> str:
    """The label of an APPLY in errors: ``APPLY orders, -old`` (a delete is ``-name``)."""
    names = []
    for change in changes[:_LABEL_CHANGES_MAX]:
        if isinstance(change, Upsert):
            names.append(str(getattr(change.spec, "name", "?")))
        elif isinstance(change, Delete):
            names.append(f"-{change.name}")
    if len(changes) > _LABEL_CHANGES_MAX:
        names.append(f"and {len(changes) - _LABEL_CHANGES_MAX} more")
    return "APPLY " + ", ".join(names) if names else "APPLY (no changes)"


# -- LIST v1 --


def encode_list_request(selector: str, watch_revision: int = NO_WATCH, max_wait_millis: int = 0) -> bytes:
    return b"".join(
        (
            encode_string("selector", selector),
            _I64.pack(check_int("watch_revision", watch_revision, NO_WATCH, limits.INT64_MAX)),
            _I32.pack(check_int("max_wait_millis", max_wait_millis, 0, limits.INT32_MAX)),
        )
    )


def decode_list_response(body: bytes) -> TopicListing:
    return decode_routed_listing(body, _ROUTE_BYTES_MIN, _decode_route, lambda routes: (routes, None))


def decode_routed_listing(body: bytes, route_bytes_min: int, decode_route, split) -> TopicListing:
    """LIST v1's answer and v2's: the same layout, each with its route codec; ``split`` turns the
    decoded routes into ListedTopic's ``routes`` and ``routes_v2``."""
    reader = BodyReader("LIST response", body)
    revision = reader.i64("revision")
    topic_count = reader.i32("topicCount")
    if not 0 <= topic_count <= (len(body) - reader.pos) // _LISTED_TOPIC_BYTES_MIN:
        raise ProtocolError(f"LIST response: topicCount {topic_count} does not fit the bytes left")
    topics = []
    for index in range(topic_count):
        spec = decode_spec(reader, f"topics[{index}].spec")
        route_count = reader.i32(f"topics[{index}].routeCount")
        if not 0 <= route_count <= (len(body) - reader.pos) // route_bytes_min:
            raise ProtocolError(f"LIST response: topics[{index}].routeCount {route_count} does not fit the bytes left")
        routes = tuple(decode_route(reader, f"topics[{index}].routes[{r}]") for r in range(route_count))
        topics.append(ListedTopic(spec, *split(routes)))
    reader.end()
    return TopicListing(revision, topics)


def _decode_route(reader: BodyReader, where: str) -> Route:
    primary = reader.string(f"{where}.primary")
    count = reader.i32(f"{where}.replicaCount")
    if not 0 <= count <= (len(reader.body) - reader.pos) // 2:
        raise ProtocolError(f"{reader.what}: {where}.replicaCount {count} does not fit the bytes left")
    return Route(primary, tuple(reader.string(f"{where}.replicas[{i}]") for i in range(count)))


def describe_list(selector: str) -> str:
    return f"LIST {selector}" if selector else "LIST (every topic)"
