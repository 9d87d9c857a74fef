"""A watch of the topics a selector matches, for the synchronous client (``Connection.watch_topics``).

LIST with a revision is held by the broker until the spec store moves past it (then it answers the
listing at the new revision) or its wait ends (then it answers that same revision and no topics:
nothing changed). Sending each answer's revision as the next one follows every change without
polling.
"""

from __future__ import annotations

from . import limits
from .errors import ConnectionClosedError
from .topics import TopicListing


def default_watch_wait_millis(timeout: float | None) -> int:
    """The default wait of one held LIST: 20 s, or half the timeout when that is shorter."""
    if timeout is None:
        return limits.DEFAULT_WATCH_WAIT_MILLIS
    return max(1, min(limits.DEFAULT_WATCH_WAIT_MILLIS, int(timeout * 500)))


class TopicWatch:
    """An iterator of listings: the one now, then one per change of the spec store. It never ends
    on its own; ``close()`` (from any thread, waking a held LIST) or leaving its ``with`` ends it."""

    def __init__(self, connection, selector: str, max_wait_millis: int) -> None:
        self._connection = connection  # its own: a held LIST would block every other request
        self._selector = selector
        self._max_wait_millis = max_wait_millis
        self._revision: int | None = None
        self._closing = False

    def __iter__(self) -> TopicWatch:
        return self

    def __next__(self) -> TopicListing:
        if self._closing:
            raise StopIteration
        try:
            if self._revision is None:
                listing = self._connection.list_topics(self._selector)
            else:
                listing = self._connection._list(self._selector, self._revision, self._max_wait_millis)
                while listing.revision <= self._revision:  # the wait ended: nothing changed
                    listing = self._connection._list(self._selector, self._revision, self._max_wait_millis)
        except ConnectionClosedError:
            if self._closing:
                raise StopIteration from None  # closed on purpose, maybe while a LIST was held
            raise
        self._revision = listing.revision
        return listing

    def close(self) -> None:
        self._closing = True
        self._connection.close()

    def __enter__(self) -> TopicWatch:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
