"""What a client that follows routes needs, shared by ``booblik.Client`` and ``booblik.aio.Client``:
the wire of API_VERSIONS, METADATA v2/v3 and PRODUCE/FETCH v3, and the route table with its
retry rules (which refusal is followed at once, which after a pause).

    API_VERSIONS request v1  => (no fields)
    API_VERSIONS response v1 => count:int32 [apiKey:int16 minVersion:int16 maxVersion:int16]*count
    METADATA request v2      => as v1;   v3 => as v1, then minRevision:int64 flags:int8 (clients send 0)
    METADATA response v2, v3 => revision:int64 topicCount:int32
                                [name:string partitionCount:int32
                                  [partition:int32 logStartOffset:int64 highWatermark:int64 route:Route]*]*
    PRODUCE v3, FETCH v3     => v2's bytes: "I follow routes" (a broker that is not the primary
                                answers NOT_PRIMARY with the route instead of proxying)
    METADATA request v4      => as v3
    METADATA response v4     => as v2, with route:RouteV2 (booblik.route_v2)
    FETCH v4                 => v2's bytes: "I follow routes and take reads from replicas" (a live
                                in-sync replica may answer it from its own copy)
"""

from __future__ import annotations

import random
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

from . import limits, wire
from .address import parse_address
from .capabilities import first_version_with
from .errors import (
    BrokerError,
    ConnectionClosedError,
    ErrorCode,
    NotPrimaryError,
    OutcomeUnknownError,
    ProtocolError,
    is_outcome_unknown,
)
from .route_v2 import ROUTE_V2_BYTES_MIN, RouteV2, decode_route_v2
from .topics import Route, _decode_route
from .wire import PartitionMetadata, TopicMetadata

API_API_VERSIONS = 6
API_VERSIONS_VERSION = 1
METADATA_ROUTES_VERSION = first_version_with(wire.API_METADATA, "routes")
METADATA_REVISION_VERSION = first_version_with(wire.API_METADATA, "atRevision")
ROUTED_VERSION = first_version_with(wire.API_PRODUCE, "followsRoutes")  # PRODUCE v3 and FETCH v3
assert ROUTED_VERSION == first_version_with(wire.API_FETCH, "followsRoutes")
METADATA_REPLICAS_VERSION = first_version_with(wire.API_METADATA, "replicaRoutes")  # RouteV2 routes
REPLICA_READS_VERSION = first_version_with(wire.API_FETCH, "replicaReadable")  # an in-sync replica may answer

# What a broker that predates API_VERSIONS (it refuses it UNSUPPORTED_VERSION) serves.
VERSIONS_BEFORE_DISCOVERY = {wire.API_PRODUCE: 1, wire.API_FETCH: 2, wire.API_METADATA: 1}


@dataclass(frozen=True)
class RoutedPartition:
    partition: int
    log_start_offset: int
    high_watermark: int
    route: Route  # a v4 answer's as a v1 Route: the primary and the other live in-sync replicas
    # METADATA v4 only (None from older versions): the epoch, every replica with its zone, in-sync flag and lag
    route_v2: RouteV2 | None = None


@dataclass(frozen=True)
class RoutedTopic:
    name: str
    partitions: tuple


@dataclass(frozen=True)
class RoutedMetadata:
    """A METADATA v2/v3/v4 answer: the spec store's revision and each partition's route."""

    revision: int
    topics: tuple

    def plain(self) -> list:
        """As ``Connection.metadata`` answers: TopicMetadata without the routes."""
        return [
            TopicMetadata(
                t.name,
                tuple(PartitionMetadata(p.partition, p.log_start_offset, p.high_watermark) for p in t.partitions),
            )
            for t in self.topics
        ]


def decode_api_versions_response(body: bytes) -> dict:
    """apiKey -> the highest version the broker serves."""
    reader = wire.BodyReader("API_VERSIONS response", body)
    count = reader.i32("count")
    if not 0 <= count <= (len(body) - reader.pos) // 6:
        raise ProtocolError(f"API_VERSIONS response: count {count} does not fit the bytes left")
    versions = {}
    for index in range(count):
        key = reader.i16(f"ranges[{index}].apiKey")
        reader.i16(f"ranges[{index}].minVersion")
        versions[key] = reader.i16(f"ranges[{index}].maxVersion")
    reader.end()
    return versions


def encode_metadata_request_v3(topics, min_revision: int) -> bytes:
    revision = wire.check_int("min_revision", min_revision, 0, limits.INT64_MAX)
    return wire.encode_metadata_request(topics) + struct.pack(">qb", revision, 0)


def decode_metadata_response_v2(body: bytes) -> RoutedMetadata:
    return _decode_routed_metadata(body, 26, lambda reader, where: (_decode_route(reader, where), None))


def decode_metadata_response_v4(body: bytes) -> RoutedMetadata:
    """As v2's, each route a RouteV2 (kept in ``route_v2``; ``route`` is its v1 Route)."""

    def routes(reader: wire.BodyReader, where: str) -> tuple[Route, RouteV2 | None]:
        route = decode_route_v2(reader, where)
        return route.route(), route

    return _decode_routed_metadata(body, 20 + ROUTE_V2_BYTES_MIN, routes)


def _decode_routed_metadata(
    body: bytes,
    entry_bytes_min: int,
    read_route: Callable[[wire.BodyReader, str], tuple[Route, RouteV2 | None]],
) -> RoutedMetadata:
    """v2's answer and v4's: the same layout, each with its route codec."""
    reader = wire.BodyReader("METADATA response", body)
    revision = reader.i64("revision")
    topic_count = reader.i32("topicCount")
    if not 0 <= topic_count <= (len(body) - reader.pos) // 6:
        raise ProtocolError(f"METADATA response: topicCount {topic_count} does not fit the bytes left")
    topics = []
    for t in range(topic_count):
        name = reader.string(f"topics[{t}].name")
        count = reader.i32(f"topics[{t}].partitionCount")
        if not 0 <= count <= (len(body) - reader.pos) // entry_bytes_min:
            raise ProtocolError(f"METADATA response: topics[{t}].partitionCount {count} does not fit the bytes left")
        partitions = []
        for p in range(count):
            where = f"topics[{t}].partitions[{p}]"
            partition = reader.i32(f"{where}.partition")
            log_start_offset = _offset(reader, f"{where}.logStartOffset")
            high_watermark = _offset(reader, f"{where}.highWatermark")
            route, route_v2 = read_route(reader, f"{where}.route")
            partitions.append(RoutedPartition(partition, log_start_offset, high_watermark, route, route_v2))
        partitions.sort(key=lambda x: x.partition)
        topics.append(RoutedTopic(name, tuple(partitions)))
    reader.end()
    return RoutedMetadata(revision, tuple(topics))


def _offset(reader: wire.BodyReader, field: str) -> int:
    value = reader.i64(field)
    if value < 0:
        raise ProtocolError(f"{reader.what}: {field} {value}, expected >= 0")
    return value


def decode_not_primary(request: str, body: bytes) -> Route:
    reader = wire.BodyReader(f"{request} refusal NOT_PRIMARY", body)
    route = _decode_route(reader, "route")
    reader.end()
    return route


def normalise(address: str) -> str:
    """``host:port`` as the pool keys it (checked: a bad address is a ValueError naming it)."""
    host, port = parse_address(address)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# What to do about a failed send: follow the answer's route now, pause then read METADATA, or give up.
AT_ONCE, PAUSE, GIVE_UP = "at once", "pause", "give up"


def is_connection_loss(error: BaseException) -> bool:
    """A lost, refused or stuck connection: the broker may be gone, so METADATA is read elsewhere."""
    if isinstance(error, ProtocolError):
        return False
    return isinstance(error, (ConnectionClosedError, ConnectionError, TimeoutError, OSError))


class RouteTable:
    """Routes by (topic, partition), the known brokers, the least revision METADATA must reach, and
    the retry rules. Thread-safe; holds no sockets (the sync and asyncio clients own those)."""

    def __init__(
        self,
        bootstrap,
        attempts_max: int = limits.DEFAULT_ROUTE_ATTEMPTS_MAX,
        retry_delay: float = limits.DEFAULT_ROUTE_RETRY_DELAY,
        retry_delay_max: float = limits.DEFAULT_ROUTE_RETRY_DELAY_MAX,
    ) -> None:
        addresses = [bootstrap] if isinstance(bootstrap, str) else list(bootstrap)
        if not addresses:
            raise ValueError("bootstrap: empty, expected at least one 'host:port'")
        wire.check_int("route_attempts_max", attempts_max, 1, limits.INT32_MAX)
        if not 0 <= retry_delay <= retry_delay_max:
            raise ValueError(
                f"route_retry_delay: {retry_delay}, expected 0 <= it <= route_retry_delay_max ({retry_delay_max})"
            )
        self.attempts_max = attempts_max
        self.retry_delay = retry_delay
        self.retry_delay_max = retry_delay_max
        self.min_revision = 0
        self._known: list = []
        self._routes: dict = {}
        self._lock = threading.Lock()
        for address in addresses:
            self.learn(address)

    def learn(self, address: str) -> str:
        name = normalise(address)
        with self._lock:
            if name not in self._known:
                self._known.append(name)
        return name

    def candidates(self, connected, avoid: str | None = None) -> list:
        """Known brokers to ask METADATA: connected first, ``avoid`` (one that just failed) last."""
        with self._lock:
            known = list(self._known)
        return sorted(known, key=lambda a: 2 if a == avoid else 0 if a in connected else 1)

    def primary(self, topic: str, partition: int) -> str | None:
        """The primary as last learned, '' while it has none, None when not known yet."""
        with self._lock:
            return self._routes.get((topic, partition))

    def forget(self, topic: str, partition: int) -> None:
        with self._lock:
            self._routes.pop((topic, partition), None)

    def set_primary(self, topic: str, partition: int, primary: str) -> str:
        name = self.learn(primary) if primary else ""
        with self._lock:
            self._routes[(topic, partition)] = name
        return name

    def record(self, answer: RoutedMetadata) -> None:
        for t in answer.topics:
            for p in t.partitions:
                self.set_primary(t.name, p.partition, p.route.primary)
                for replica in p.route.replicas:
                    self.learn(replica)

    def applied(self, revision: int) -> None:
        with self._lock:
            self.min_revision = max(self.min_revision, revision)

    def verdict(
        self, error: BaseException, attempt: int, topic: str | None = None, partition: int | None = None
    ) -> str:
        """Whether (and how) to send again after ``error`` on the ``attempt``-th send."""
        lost = is_connection_loss(error)
        if not (lost or (isinstance(error, BrokerError) and error.retriable)) or attempt >= self.attempts_max:
            return GIVE_UP
        if topic is not None and isinstance(error, NotPrimaryError):
            if self.set_primary(topic, partition, error.route.primary):
                return AT_ONCE
            return PAUSE
        if topic is not None:
            self.forget(topic, partition)  # read again from METADATA after the pause
        return PAUSE

    def pause(self, pauses: int) -> float:
        """Seconds to wait before the next send: doubling from the first, capped, with jitter in its upper half."""
        step = min(self.retry_delay_max, self.retry_delay * 2 ** min(pauses, 30))
        return step / 2 + random.random() * step / 2


def unknown_after_loss(
    error: BaseException, lost: BaseException | None, what: str | None
) -> OutcomeUnknownError | None:
    """Giving up with ``error`` after ``lost``, an earlier send of the request lost in flight: the
    outcome is unknown (that send may have been stored), so not ``error``'s refusal. None when
    nothing was lost, or ``error`` already says the outcome is unknown."""
    if lost is None or is_outcome_unknown(error):
        return None
    last = f"was answered {error.name}" if isinstance(error, BrokerError) else f"failed: {error}"
    why = f"an earlier send was lost before its answer, and the last one {last}"
    return OutcomeUnknownError(what or "request", why)


def no_primary(what: str) -> BrokerError:
    return BrokerError(ErrorCode.NO_PRIMARY, what)
