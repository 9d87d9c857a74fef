"""How long a held request may wait, checked against the socket timeout that must outlast it.

Its own module because the connections, the consumers and the watches all check it, and none of
them should import another to get it.
"""

from __future__ import annotations

from . import limits, wire


def check_wait_fits_timeout(max_wait_millis: int, timeout: float | None) -> None:
    wire.check_int("max_wait_millis", max_wait_millis, 0, limits.INT32_MAX)
    if timeout is not None and max_wait_millis / 1000 >= timeout:
        raise ValueError(
            f"max_wait_millis: {max_wait_millis} ms is not shorter than the connection timeout of {timeout} s; "
            "a healthy long fetch would time out. Shorten the wait or connect with a longer timeout"
        )
