"""A blocking connection to a broker, speaking through the harness's own codec.

This is how the harness sees what really happened: it reads back what a client produced and writes
what a client must fetch. It verifies the correlationId of every answer, so a stray frame from a
broker shows up here as an error instead of as a shifted answer.
"""

import socket
import struct

from . import topics_wire, wire

TIMEOUT_S = 10  # a local broker answers in milliseconds; this only bounds a broken one
FETCH_MAX_BYTES = 1024 * 1024  # larger than anything a check writes, so one fetch reads it all


class BrokerRefusal(Exception):
    """A response with a non-zero error code."""

    def __init__(self, code: int):
        super().__init__(wire.error_name(code))
        self.code = code
        self.name = wire.error_name(code)


def parse_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"broker address {address!r}, expected host:port")
    return host.strip("[]"), int(port)


class Connection:
    def __init__(self, address: str, timeout_s: float = TIMEOUT_S):
        self.address = address
        self.sock = socket.create_connection(parse_address(address), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.next_correlation_id = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.sock.close()

    # ---- frames ----

    def correlation_id(self) -> int:
        value = self.next_correlation_id
        self.next_correlation_id += 1
        return value

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_exact(self, count: int) -> bytes:
        chunks = []
        while count > 0:
            chunk = self.sock.recv(min(count, 1 << 16))
            if not chunk:
                raise wire.ProtocolError("connection closed by the broker in the middle of a frame")
            chunks.append(chunk)
            count -= len(chunk)
        return b"".join(chunks)

    def read_response(self, timeout_s: float | None = None) -> tuple[int, int, bytes]:
        """Read one response frame: (correlationId, errorCode, body)."""
        if timeout_s is not None:
            self.sock.settimeout(timeout_s)
        try:
            (length,) = struct.unpack(">i", self.read_exact(4))
            if not wire.RESPONSE_HEADER_BYTES <= length <= wire.FRAME_BYTES_MAX:
                raise wire.ProtocolError(f"response frameLength {length}, expected 6..8 MiB")
            frame = self.read_exact(length)
        finally:
            if timeout_s is not None:
                self.sock.settimeout(TIMEOUT_S)
        correlation_id, error_code = struct.unpack_from(">ih", frame)
        return correlation_id, error_code, frame[wire.RESPONSE_HEADER_BYTES :]

    def request(self, api_key: int, version: int, payload: bytes, timeout_s: float | None = None):
        correlation_id = self.correlation_id()
        self.send(wire.request_frame(api_key, version, correlation_id, payload))
        return self.answer(correlation_id, timeout_s)

    def answer(self, correlation_id: int, timeout_s: float | None = None) -> bytes:
        got, error_code, body = self.read_response(timeout_s)
        if got != correlation_id:
            raise wire.ProtocolError(f"answer has correlationId {got}, expected {correlation_id}")
        if error_code != 0:
            raise BrokerRefusal(error_code)
        return body

    # ---- APIs ----

    def metadata(self, *topics: str) -> dict[str, list[tuple[int, int, int]]]:
        body = self.request(wire.API_METADATA, 1, wire.metadata_v1(list(topics)))
        return wire.parse_metadata_body(body)

    def produce(self, topic: str, partition: int, records: list[bytes], ack: str = "written"):
        """(baseOffset, logEndOffset), or None for ack=none, which is never answered."""
        ack_policy = wire.ACK_BY_NAME[ack]
        payload = wire.produce_v1(topic, partition, ack_policy, records)
        if ack_policy == wire.ACK_NONE:
            self.send(wire.request_frame(wire.API_PRODUCE, 1, self.correlation_id(), payload))
            return None
        return wire.parse_produce_body(self.request(wire.API_PRODUCE, 1, payload))

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = FETCH_MAX_BYTES,
        max_wait_ms: int = 0,
        min_bytes: int = 0,
    ) -> tuple[int, bytes]:
        """(highWatermark, payload) of one FETCH v2."""
        payload = wire.fetch_v2(topic, partition, offset, max_bytes, max_wait_ms, min_bytes)
        timeout_s = TIMEOUT_S + max_wait_ms / 1000
        return wire.parse_fetch_body(self.request(wire.API_FETCH, 2, payload, timeout_s))

    def apply_topics(self, *changes: bytes) -> int:
        """One APPLY of changes built with topics_wire.upsert and .delete; the new revision."""
        body = self.request(topics_wire.API_APPLY, 1, topics_wire.apply_v1(list(changes)))
        return topics_wire.parse_apply_body(body)

    def list_topics(self, selector: str = "") -> tuple[int, list]:
        """(store revision, [topics_wire.Listed]) of one LIST without a watch."""
        return topics_wire.parse_list_body(self.request(topics_wire.API_LIST, 1, topics_wire.list_v1(selector)))
