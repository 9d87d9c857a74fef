"""A deliberately misbehaving broker, for the checks a real broker cannot stage.

It listens on 127.0.0.1 (port 0), answers METADATA truthfully for `conformance` (3 partitions) and
`single` (1), refuses every other API but PRODUCE and FETCH with UNSUPPORTED_VERSION (as a v1
broker does), and answers PRODUCE and FETCH through replaceable handlers: a corrupt record, a wrong
correlationId, a frame cut short. It records every request it decoded, so a check can also see what
a client really put on the wire.
"""

import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Callable

from . import wire
from .context import PARTITION_COUNTS


@dataclass
class Reply:
    data: bytes  # bytes to send, not necessarily a whole frame
    close: bool = False  # close the connection after sending them


Handler = Callable[[wire.Request], "Reply | None"]  # None: send nothing
UNSUPPORTED_VERSION = 4


def metadata_reply(request: wire.Request) -> Reply:
    names = request.topics or sorted(PARTITION_COUNTS)
    if any(name not in PARTITION_COUNTS for name in names):
        return Reply(wire.response_frame(request.correlation_id, 1))
    topics = {name: [(p, 0, 0) for p in range(PARTITION_COUNTS[name])] for name in names}
    return Reply(wire.response_frame(request.correlation_id, 0, wire.metadata_body(topics)))


def produce_reply(request: wire.Request) -> Reply | None:
    """A well-behaved answer: nothing for ack=none, offsets from 0 otherwise."""
    if request.ack == wire.ACK_NONE:
        return None
    body = wire.produce_body(0, len(request.records))
    return Reply(wire.response_frame(request.correlation_id, 0, body))


def fetch_reply(request: wire.Request) -> Reply:
    return Reply(wire.response_frame(request.correlation_id, 0, wire.fetch_body(0, b"")))


class RogueBroker:
    def __init__(self, on_produce: Handler = produce_reply, on_fetch: Handler = fetch_reply):
        self.handlers = {
            wire.API_METADATA: metadata_reply,
            wire.API_PRODUCE: on_produce,
            wire.API_FETCH: on_fetch,
        }
        self.requests: list[wire.Request] = []
        self.changed = threading.Condition()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.closed = False
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for conn in list(self.connections):
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def wait_for(self, predicate: Callable[[wire.Request], bool], timeout_s: float):
        """The first recorded request that satisfies predicate, waiting up to timeout_s for it."""
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while True:
                for request in self.requests:
                    if predicate(request):
                        return request
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    header = _read_exact(conn, 4)
                    if header is None:
                        return
                    (length,) = struct.unpack(">i", header)
                    if not 1 <= length <= wire.FRAME_BYTES_MAX:
                        return
                    frame = _read_exact(conn, length)
                    if frame is None:
                        return
                    request = wire.parse_request(frame)
                    with self.changed:
                        self.requests.append(request)
                        self.changed.notify_all()
                    handler = self.handlers.get(request.api_key)
                    # Any other API (API_VERSIONS, say) is refused as v1 says a broker refuses what
                    # it does not know, so a client that asks what the broker speaks carries on.
                    reply = handler(request) if handler else Reply(
                        wire.response_frame(request.correlation_id, UNSUPPORTED_VERSION))
                    if reply is not None:
                        conn.sendall(reply.data)
                        if reply.close:
                            conn.shutdown(socket.SHUT_RDWR)
                            return
            except (OSError, wire.ProtocolError):
                return


def _read_exact(conn: socket.socket, count: int) -> bytes | None:
    chunks = []
    while count > 0:
        chunk = conn.recv(count)
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)
