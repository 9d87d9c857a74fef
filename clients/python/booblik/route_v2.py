"""A partition's route with its replicas (RouteV2), and LIST v2, which answers with it.

    RouteV2      => epoch:int32 primary:string replicaCount:int32 [replica:ReplicaState]*replicaCount
    ReplicaState => member:string address:string zone:string flags:int8 lagRecords:int64 lagMillis:int64
    LIST request v2  => as v1 (selector:string watchRevision:int64 maxWaitMillis:int32)
    LIST response v2 => revision:int64 topicCount:int32
      [spec:TopicSpec routeCount:int32 [route:RouteV2]*routeCount]*topicCount

Every replica of the partition is listed, the primary among them, in placement order (the primary
first; a failover moves the promoted replica to the front). Lags are -1 where the answer does not
know them (LIST always; METADATA v4 for a primary that did not answer); below -1 is malformed. On a
single broker the route is the broker itself: epoch 0, one replica, member and zone "", flags 3, lag 0.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .capabilities import first_version_with
from .errors import ProtocolError
from .topics import Route, TopicListing, decode_routed_listing
from .wire import API_LIST, BodyReader

LIST_REPLICAS_VERSION = first_version_with(API_LIST, "replicaRoutes")
# lagRecords / lagMillis when the answer does not know.
LAG_UNKNOWN = -1
# epoch + primary "" + replicaCount; a replica of empty strings: 3 lengths, flags and two lags.
ROUTE_V2_BYTES_MIN = 4 + 2 + 4
_REPLICA_BYTES_MIN = 2 + 2 + 2 + 1 + 8 + 8


class ReplicaFlag(enum.IntFlag):
    IN_SYNC = 1  # in the partition's in-sync set: holds everything committed
    LIVE = 2  # holds its membership lease now: its address is dialable


_READABLE = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE


@dataclass(frozen=True)
class ReplicaState:
    member: str  # the member id ("" on a single broker)
    address: str  # host:port; empty when it is not live
    zone: str  # "" when none was configured
    flags: int  # ReplicaFlag bits
    lag_records: int  # records the primary holds that it has not acknowledged; -1 unknown
    lag_millis: int  # ms since it last had everything the primary had; -1 unknown

    @property
    def in_sync(self) -> bool:
        return bool(self.flags & ReplicaFlag.IN_SYNC)

    @property
    def live(self) -> bool:
        return bool(self.flags & ReplicaFlag.LIVE)

    @property
    def readable(self) -> bool:
        """In sync, live and dialable: a replica a client may read from."""
        return self.flags & _READABLE == _READABLE and self.address != ""


@dataclass(frozen=True)
class RouteV2:
    epoch: int  # the primary's epoch (0 for a partition never failed over)
    primary: str  # its host:port, empty when it has none
    replicas: tuple  # tuple[ReplicaState], the primary among them, in placement order

    def route(self) -> Route:
        """The v1 Route of it: the primary and the other live in-sync replicas (what NOT_PRIMARY carries)."""
        return Route(self.primary, tuple(r.address for r in self.replicas if r.readable and r.address != self.primary))


def decode_route_v2(reader: BodyReader, where: str) -> RouteV2:
    epoch = reader.i32(f"{where}.epoch")
    if epoch < 0:
        raise ProtocolError(f"{reader.what}: {where}.epoch {epoch}, expected >= 0")
    primary = reader.string(f"{where}.primary")
    count = reader.i32(f"{where}.replicaCount")
    if not 0 <= count <= (len(reader.body) - reader.pos) // _REPLICA_BYTES_MIN:
        raise ProtocolError(f"{reader.what}: {where}.replicaCount {count} does not fit the bytes left")
    replicas = []
    for index in range(count):
        at = f"{where}.replicas[{index}]"
        replicas.append(
            ReplicaState(
                reader.string(f"{at}.member"),
                reader.string(f"{at}.address"),
                reader.string(f"{at}.zone"),
                reader.i8(f"{at}.flags"),
                _lag(reader, f"{at}.lagRecords"),
                _lag(reader, f"{at}.lagMillis"),
            )
        )
    return RouteV2(epoch, primary, tuple(replicas))


def _lag(reader: BodyReader, field: str) -> int:
    lag = reader.i64(field)
    if lag < LAG_UNKNOWN:
        raise ProtocolError(f"{reader.what}: {field} {lag}, expected >= -1 (-1: unknown)")
    return lag


def decode_list_response_v2(body: bytes) -> TopicListing:
    """A LIST v2 answer: each topic's ``routes`` as v1 Routes (``RouteV2.route()``), and ``routes_v2``."""
    return decode_routed_listing(
        body, ROUTE_V2_BYTES_MIN, decode_route_v2, lambda routes: (tuple(r.route() for r in routes), routes)
    )
