"""Reading one partition from an offset the reader keeps itself.

There are no consumer groups and no committed offsets: ``position`` is the number to write down,
after the records before it are dealt with, so that a restart re-delivers instead of skipping.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from . import limits, wire
from .waits import check_wait_fits_timeout
from .wire import FetchResult, Record


class Fetcher(Protocol):
    """What a consumer reads through: a ``Connection`` or a ``Client``. Typed by shape, so the
    consumer sits below both and each can hand out consumers without an import back."""

    timeout: float | None

    def fetch(self, topic: str, partition: int, offset: int, max_bytes: int, max_wait_millis: int) -> FetchResult: ...


class ConsumerBase:
    """Position and buffering shared by the synchronous and the asyncio consumer."""

    def __init__(self, topic: str, partition: int, offset: int, max_bytes: int, max_wait_millis: int) -> None:
        wire.check_int("partition", partition, 0, limits.INT32_MAX)
        wire.check_int("offset", offset, 0, limits.INT64_MAX)
        wire.check_int("max_bytes", max_bytes, 1, limits.FETCH_MAX_BYTES_MAX)
        wire.check_int("max_wait_millis", max_wait_millis, 0, limits.INT32_MAX)
        self.topic = topic
        self.partition = partition
        self.max_bytes = max_bytes
        self.max_wait_millis = max_wait_millis
        self._position = offset
        self._buffer: deque = deque()  # records fetched but not yet given out
        self._fetch_offset = offset  # where the next fetch starts (after the buffer)
        self._seeks = 0  # a fetch answered after a seek belongs to the old position: dropped

    @property
    def position(self) -> int:
        """The offset of the next record this consumer will give out: the number to persist."""
        return self._position

    def seek(self, offset: int) -> None:
        """Continue from ``offset``; records already fetched past the old position are dropped."""
        wire.check_int("offset", offset, 0, limits.INT64_MAX)
        self._buffer.clear()
        self._position = offset
        self._fetch_offset = offset
        self._seeks += 1

    def _fill(self, result: wire.FetchResult, seeks: int) -> None:
        if seeks != self._seeks:
            return
        self._buffer.extend(result.records)
        self._fetch_offset = result.next_offset

    def _next_buffered(self) -> Record:
        record = self._buffer.popleft()
        self._position = record.offset + 1
        return record

    def _take_buffered(self) -> list:
        records = list(self._buffer)
        self._buffer.clear()
        if records:
            self._position = records[-1].offset + 1
        return records

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.topic}/{self.partition} position={self._position}>"


class Consumer(ConsumerBase):
    """Iterate it for records, one at a time, forever (a partition has no end, only a place not yet
    written to); ``break`` whenever you like. Or call ``poll()`` for one fetch's worth.

    Nothing is fetched until the first record is asked for.
    """

    def __init__(
        self,
        connection: Fetcher,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
    ) -> None:
        super().__init__(topic, partition, offset, max_bytes, max_wait_millis)
        check_wait_fits_timeout(max_wait_millis, connection.timeout)
        self.connection = connection

    def __iter__(self) -> Consumer:
        return self

    def __next__(self) -> Record:
        while not self._buffer:
            self._fetch()
        return self._next_buffered()

    def poll(self) -> list:
        """One fetch (or what an interrupted iteration left): its records, empty when caught up."""
        if not self._buffer:
            self._fetch()
        return self._take_buffered()

    def _fetch(self) -> None:
        seeks = self._seeks
        result = self.connection.fetch(
            self.topic,
            self.partition,
            self._fetch_offset,
            max_bytes=self.max_bytes,
            max_wait_millis=self.max_wait_millis,
        )
        self._fill(result, seeks)
