"""Gathering records that arrive one at a time into batches, one open batch per partition.

Pure bookkeeping with the time passed in, shared by both producers: it never sleeps, never sends.
A batch is ready when it is full (record count, or the frame cap in bytes) or when its first record
has waited ``linger`` seconds. Batches of one partition come out in the order they were opened, so
they land in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import limits, wire
from .partitioner import key_bytes

_RECORD_SIZE_BYTES = 4  # the int32 size in front of each record in a PRODUCE request


@dataclass
class Batch:
    topic: str
    partition: int
    opened_at: float
    records_bytes_max: int
    payloads: list = field(default_factory=list)
    waiters: list = field(default_factory=list)  # one per payload: whatever the producer completes
    records_bytes: int = 0

    def fits(self, payload: bytes) -> bool:
        return self.records_bytes + _RECORD_SIZE_BYTES + len(payload) <= self.records_bytes_max


def records_bytes_max(topic: str) -> int:
    return limits.FRAME_BYTES_MAX + 4 - wire.produce_overhead_bytes(topic)


class Accumulator:
    def __init__(self, max_batch_size: int, linger: float) -> None:
        self.max_batch_size = max_batch_size
        self.linger = linger
        self._open: dict = {}  # (topic, partition) -> Batch still taking records
        self._full: list = []  # closed batches waiting to be sent, oldest first

    def __len__(self) -> int:
        """Records held, not yet handed out."""
        return sum(len(b.payloads) for b in self._open.values()) + sum(len(b.payloads) for b in self._full)

    def check_fits(self, topic: str, payload: bytes) -> None:
        """Refuse at once a record that no PRODUCE frame could carry."""
        if _RECORD_SIZE_BYTES + len(payload) > records_bytes_max(topic):
            raise ValueError(
                f"payload: {len(payload)} bytes, more than one request to topic {topic!r} can carry "
                f"({records_bytes_max(topic) - _RECORD_SIZE_BYTES})"
            )

    def append(self, topic: str, partition: int, payload: bytes, waiter: Any, now: float) -> bool:
        """Add a record; True when a batch is now full and should go out without waiting."""
        self.check_fits(topic, payload)
        key = (topic, partition)
        batch = self._open.get(key)
        if batch is not None and not batch.fits(payload):
            self._full.append(self._open.pop(key))
            batch = None
        if batch is None:
            batch = self._open[key] = Batch(topic, partition, now, records_bytes_max(topic))
        batch.payloads.append(payload)
        batch.waiters.append(waiter)
        batch.records_bytes += _RECORD_SIZE_BYTES + len(payload)
        if len(batch.payloads) >= self.max_batch_size:
            self._full.append(self._open.pop(key))
        return bool(self._full)

    def ready(self, now: float, everything: bool = False) -> list:
        """Remove and return the batches due now (all of them when ``everything``), oldest first."""
        due = self._full
        self._full = []
        for key, batch in list(self._open.items()):
            if everything or now >= batch.opened_at + self.linger:
                due.append(self._open.pop(key))
        due.sort(key=lambda b: b.opened_at)  # stable: a partition's batches keep their order
        return due

    def next_deadline(self) -> float | None:
        """When the oldest open batch is due, or None when nothing waits (full batches are due now)."""
        if self._full:
            return float("-inf")
        if not self._open:
            return None
        return min(b.opened_at for b in self._open.values()) + self.linger


@dataclass(frozen=True)
class ProducerConfig:
    """How a Producer batches.

    ``linger``: seconds the first record of a batch waits for company (0 sends at the next chance).
    ``max_batch_size``: records per batch; a full batch goes out at once.
    ``ack``: the acknowledgement every batch asks for.
    """

    linger: float = limits.DEFAULT_LINGER
    max_batch_size: int = limits.DEFAULT_MAX_BATCH_SIZE
    ack: wire.AckPolicy = wire.AckPolicy.WRITTEN

    def __post_init__(self) -> None:
        if isinstance(self.linger, bool) or not isinstance(self.linger, (int, float)) or not self.linger >= 0:
            raise ValueError(f"linger: {self.linger!r}, expected seconds >= 0")
        wire.check_int("max_batch_size", self.max_batch_size, 1, limits.INT32_MAX)
        object.__setattr__(self, "ack", wire.AckPolicy(self.ack))


def check_send(topic: str, payload: bytes, key, partition: int | None) -> bytes:
    """What a send is checked for before it is queued, so a bad one fails alone and at once.

    An empty payload and a bad topic name are refused here: in a batch, the broker's refusal
    (CORRUPT_REQUEST, naming nothing) would fail every record that shares its request.
    """
    wire.check_topic_name(topic)
    if partition is not None:
        wire.check_int("partition", partition, 0, limits.INT32_MAX)
    if key is not None:
        key_bytes(key)  # a key of the wrong type fails now, not when its topic's partitions arrive
    return wire.check_payload(payload)
