"""Reads from in-sync replicas in a preferred zone (``prefer_zone``), shared by ``booblik.Client``
and ``booblik.aio.Client``: which broker a FETCH goes to, and a high watermark that never goes back.

1. The client keeps each partition's RouteV2 from METADATA v4 (None from a broker without v4: then
   the partition is read from its primary only).
2. A FETCH goes to a replica that is IN_SYNC and LIVE in the preferred zone: the primary when it is
   one of them, else the first in placement order; the primary when none is.
3. A replica that answers NOT_PRIMARY is left: the fetch goes to the primary the answer names, and
   the partition's route is read again before a replica is picked for it again.
4. A replica's high watermark (the commit offset it knows) can trail the primary's, so the highest
   one any fetch answer showed is kept per partition, and every fetch reports the higher of the two.

Thread-safe; holds no sockets.
"""

from __future__ import annotations

import dataclasses
import threading

from .routing import RoutedMetadata, normalise
from .wire import FetchResult


def check_zone(prefer_zone) -> str | None:
    """``prefer_zone`` as given, refused when it cannot name a zone (None: off)."""
    if prefer_zone is None:
        return None
    if not isinstance(prefer_zone, str):
        raise TypeError(f"prefer_zone: expected a zone name (str) or None, got {type(prefer_zone).__name__}")
    if prefer_zone == "":
        raise ValueError("prefer_zone: empty, expected a zone name, or None to read from primaries only")
    return prefer_zone


class ReplicaReads:
    def __init__(self, zone: str) -> None:
        self.zone = zone
        self._routes: dict = {}  # (topic, partition) -> RouteV2, or None (answered by a broker without v4)
        self._high_watermarks: dict = {}  # (topic, partition) -> the highest any fetch answer showed
        self._lock = threading.Lock()

    def record(self, answer: RoutedMetadata) -> None:
        with self._lock:
            for t in answer.topics:
                for p in t.partitions:
                    self._routes[(t.name, p.partition)] = p.route_v2

    def needs_route(self, topic: str, partition: int) -> bool:
        """No route kept: never read, or left after a NOT_PRIMARY; METADATA comes before the pick."""
        with self._lock:
            return (topic, partition) not in self._routes

    def leave(self, topic: str, partition: int) -> None:
        with self._lock:
            self._routes.pop((topic, partition), None)

    def pick(self, topic: str, partition: int) -> str | None:
        """The address to read ``topic``/``partition`` from, normalised; None: its primary."""
        with self._lock:
            route = self._routes.get((topic, partition))
        if route is None or not route.primary:
            return None
        here = [r for r in route.replicas if r.readable and r.zone == self.zone]
        if not here:
            return None
        primary = normalise(route.primary)
        addresses = [normalise(r.address) for r in here]
        return primary if primary in addresses else addresses[0]

    def report(self, topic: str, partition: int, result: FetchResult) -> FetchResult:
        """``result`` with the highest high watermark seen for the partition, this one included."""
        key = (topic, partition)
        with self._lock:
            highest = max(self._high_watermarks.get(key, result.high_watermark), result.high_watermark)
            self._high_watermarks[key] = highest
        if highest == result.high_watermark:
            return result
        return dataclasses.replace(result, high_watermark=highest)
