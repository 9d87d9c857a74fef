"""Which partition a record goes to: FNV-1a over the key, or round-robin without one.

The key never reaches the broker, so every client must agree on this function byte for byte, or one
key lands in two partitions and nothing errors. Python's trap is the 32-bit mask: its integers never
overflow, so without ``& 0xFFFFFFFF`` the hash grows forever and agrees with no other language.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable

from . import limits, wire
from .errors import BrokerError, ErrorCode, ProtocolError

FNV_OFFSET_BASIS = 0x811C9DC5
FNV_PRIME = 0x01000193

Key = bytes | bytearray | memoryview | str


def fnv1a(data: bytes | bytearray | memoryview) -> int:
    """FNV-1a, 32 bits, over bytes read as unsigned (iterating bytes gives 0..255 in Python)."""
    value = FNV_OFFSET_BASIS
    for byte in bytes(data):
        value = ((value ^ byte) * FNV_PRIME) & 0xFFFFFFFF
    return value


def key_bytes(key: Key) -> bytes:
    """A key as bytes: a ``str`` is encoded as UTF-8, bytes-like values are taken as they are."""
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"key: expected bytes or str, got {type(key).__name__}")


def partition_index(key: Key, partition_count: int) -> int:
    """Index (into the partitions sorted by id) that ``key`` maps to among ``partition_count``."""
    if partition_count <= 0:
        raise ValueError(
            f"partition_count: {partition_count}, expected > 0 (a topic with no partitions takes no records)"
        )
    # Both operands are non-negative, so Python's % is the unsigned remainder the spec asks for.
    return fnv1a(key_bytes(key)) % partition_count


class Partitioner:
    """Picks a partition id of one topic for a key, or in turn for a record without one.

    ``partition_for(None)`` advances the round-robin counter on every call, so asking and then
    sending is two turns of it. Thread-safe.
    """

    def __init__(self, partition_ids: Iterable[int]) -> None:
        self.partitions: tuple[int, ...] = tuple(sorted(partition_ids))
        self._turns = itertools.count()
        self._lock = threading.Lock()

    def partition_for(self, key: Key | None = None) -> int:
        if not self.partitions:
            raise ValueError("topic has no partitions: there is nowhere to send a record")
        if key is None:  # an empty key is a key (it hashes); only None takes a turn
            with self._lock:
                turn = next(self._turns)
            return self.partitions[turn % len(self.partitions)]
        return self.partitions[partition_index(key, len(self.partitions))]


class TopicRouting:
    """What the sync and asyncio ``Topic`` share: a name, its partitions, the choice among them, and
    how old the partition list is. The list is read again (by the Topic) once it is
    ``metadata_max_age`` seconds old, so partitions added at runtime get records; 0 reads it before
    every send."""

    def __init__(
        self,
        connection,
        name: str,
        partitions: Iterable[int],
        metadata_max_age: float = limits.DEFAULT_METADATA_MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not metadata_max_age >= 0:
            raise ValueError(f"metadata_max_age: {metadata_max_age}, expected >= 0 seconds")
        self.connection = connection
        self.name = name
        self.metadata_max_age = metadata_max_age
        self._clock = clock
        self._partitioner = Partitioner(partitions)
        self._loaded_at = clock()

    @property
    def partitions(self) -> tuple:
        """Partition ids, sorted, as last read."""
        return self._partitioner.partitions

    @property
    def stale(self) -> bool:
        """Whether the list is old enough to be read again before the next send."""
        return self._clock() - self._loaded_at >= self.metadata_max_age

    def partition_for(self, key: Key | None = None) -> int:
        """The partition for ``key``; without a key, the next one in turn (every call is a turn)."""
        return self._partitioner.partition_for(key)

    def _read(self, topics: list) -> None:
        """Takes a METADATA answer for this topic as the partition list (the round robin goes on)."""
        meta = wire.only_topic(topics, self.name)
        if not meta.partitions:
            raise ProtocolError(f"topic {self.name}: METADATA lists no partitions")
        self._partitioner.partitions = tuple(sorted(p.partition for p in meta.partitions))
        self._loaded_at = self._clock()

    def _read_failed(self) -> None:
        """A read that failed leaves the list as it was, and waits out another age before the next."""
        self._loaded_at = self._clock()

    @staticmethod
    def _refused_partition(error: BaseException) -> bool:
        """UNKNOWN_TOPIC_OR_PARTITION to a send: the list is out of date (or the topic gone)."""
        return isinstance(error, BrokerError) and error.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
