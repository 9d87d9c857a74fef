"""Reading one partition with asyncio: an async iterator that never ends on its own.

Cancelling the task that iterates it stops it; the position stays at the last record given out and
the connection stays usable (the abandoned fetch's answer is read and dropped).
"""

from __future__ import annotations

from typing import Protocol

from .. import limits
from ..consumer import ConsumerBase
from ..waits import check_wait_fits_timeout
from ..wire import FetchResult, Record


class AsyncFetcher(Protocol):
    """What an asyncio consumer reads through: a ``booblik.aio.Connection`` or ``Client``. Typed
    by shape, so the consumer sits below both and each can hand out consumers without an import back."""

    timeout: float | None

    async def fetch(
        self, topic: str, partition: int, offset: int, max_bytes: int, max_wait_millis: int
    ) -> FetchResult: ...


class Consumer(ConsumerBase):
    def __init__(
        self,
        connection: AsyncFetcher,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = limits.DEFAULT_MAX_BYTES,
        max_wait_millis: int = limits.DEFAULT_MAX_WAIT_MILLIS,
    ) -> None:
        super().__init__(topic, partition, offset, max_bytes, max_wait_millis)
        check_wait_fits_timeout(max_wait_millis, connection.timeout)
        self.connection = connection

    def __aiter__(self) -> Consumer:
        return self

    async def __anext__(self) -> Record:
        while not self._buffer:
            await self._fetch()
        return self._next_buffered()

    async def poll(self) -> list:
        """One fetch (or what an interrupted iteration left): its records, empty when caught up."""
        if not self._buffer:
            await self._fetch()
        return self._take_buffered()

    async def _fetch(self) -> None:
        seeks = self._seeks
        result = await self.connection.fetch(
            self.topic,
            self.partition,
            self._fetch_offset,
            max_bytes=self.max_bytes,
            max_wait_millis=self.max_wait_millis,
        )
        self._fill(result, seeks)
