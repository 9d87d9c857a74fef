"""A watch of the topics a selector matches, for booblik.aio (``Connection.watch_topics``); the
protocol side is the synchronous one's (booblik.watch)."""

from __future__ import annotations

from ..topics import TopicListing


class TopicWatch:
    """An async iterator of listings (the one now, then one per change of the spec store) and an
    async context manager that closes its connection. It never ends on its own."""

    def __init__(self, connect, selector: str, max_wait_millis: int) -> None:
        self._connect = connect  # opens the watch's own connection, on the first step
        self._connection = None
        self._closed = False
        self._selector = selector
        self._max_wait_millis = max_wait_millis
        self._revision: int | None = None

    def __aiter__(self) -> TopicWatch:
        return self

    async def __anext__(self) -> TopicListing:
        if self._closed:
            raise StopAsyncIteration
        if self._connection is None:
            self._connection = await self._connect()
        if self._revision is None:
            listing = await self._connection.list_topics(self._selector)
        else:
            listing = await self._connection._list(self._selector, self._revision, self._max_wait_millis)
            while listing.revision <= self._revision:  # the wait ended: nothing changed
                listing = await self._connection._list(self._selector, self._revision, self._max_wait_millis)
        self._revision = listing.revision
        return listing

    async def aclose(self) -> None:
        self._closed = True
        if self._connection is not None:
            await self._connection.close()

    async def __aenter__(self) -> TopicWatch:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
