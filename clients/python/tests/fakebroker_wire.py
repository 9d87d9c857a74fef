"""The fake broker's own wire: error codes, frames, stored records, and a decoder of requests.

Written apart from the client's codec on purpose: sharing it would let a bug on both sides pass.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

FRAME_BYTES_MAX = 8 * 1024 * 1024
UNKNOWN_TOPIC_OR_PARTITION = 1
OFFSET_OUT_OF_RANGE = 2
UNSUPPORTED_VERSION = 4
CORRUPT_REQUEST = 5
REVISION_MISMATCH = 7
OFFSET_MISMATCH = 8
NOT_PRIMARY = 9
NO_PRIMARY = 10
INVALID_ARGUMENT = 11
TLS_REQUIRED = 18


def crc32c_bitwise(data: bytes) -> int:
    """CRC-32C one bit at a time: slow, obviously right, and not the client's table."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def response_frame(correlation_id: int, error_code: int = 0, body: bytes = b"") -> bytes:
    return struct.pack(">iih", 6 + len(body), correlation_id, error_code) + body


def stored_record(payload: bytes, crc: int | None = None) -> bytes:
    return struct.pack(">iI", len(payload), crc32c_bitwise(payload) if crc is None else crc) + payload


@dataclass
class Request:
    api_key: int
    api_version: int
    correlation_id: int
    raw: bytes  # the whole frame as received, length prefix included
    fields: dict = field(default_factory=dict)
    answer: bytes | None = None  # what the broker would send (None: nothing), for respond to reuse
    principal: str | None = None  # who the connection was when this was served (None: nobody yet)


@dataclass
class Replica:
    """One replica in a RouteV2, as the fake cluster's record keeps it."""

    address: str
    zone: str = ""
    flags: int = 3  # IN_SYNC (1) | LIVE (2)
    member: str = ""
    lag_records: int = 0
    lag_millis: int = 0


@dataclass(frozen=True)
class Served:
    """A FETCH a broker answered with records (or none): who, which version, from where, and the high watermark."""

    address: str
    api_version: int
    offset: int
    high_watermark: int


@dataclass
class Reply:
    """What ``respond`` returns to override the answer: raw bytes, then maybe a hang-up."""

    data: bytes = b""
    close: bool = False
    dribble: bool = False  # one byte per send: the client must reassemble a frame split anywhere


class Decoder:
    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.pos = 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.payload):
            raise ValueError("runs past the frame")
        (value,) = struct.unpack_from(fmt, self.payload, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        length = self.take(">H")
        data = self.payload[self.pos : self.pos + length]
        if len(data) != length:
            raise ValueError("string runs past the frame")
        self.pos += length
        return data.decode("utf-8")

    def raw(self, size: int) -> bytes:
        data = self.payload[self.pos : self.pos + size]
        if size < 0 or len(data) != size:
            raise ValueError("bytes run past the frame")
        self.pos += size
        return data


def route_bytes(primary: str) -> bytes:
    return string_bytes(primary) + struct.pack(">i", 0)


def string_bytes(s: str) -> bytes:
    data = s.encode("utf-8")
    return struct.pack(">H", len(data)) + data
