"""The harness's own minimal codec for booblik protocol v1.

Written apart from every client on purpose: a client and a harness that shared a codec would share
its bugs, and a check would then prove only that the client agrees with itself.

    request  => frameLength:int32 apiKey:int16 apiVersion:int16 correlationId:int32 payload
    response => frameLength:int32 correlationId:int32 errorCode:int16 body (only on success)
    PRODUCE request v1  => topic partition:int32 ackPolicy:int8 recordCount:int32 (size:int32 bytes)*
    PRODUCE response v1 => baseOffset:int64 logEndOffset:int64
    FETCH request v2    => topic partition:int32 fetchOffset:int64 maxBytes:int32 maxWaitMillis:int32
                           minBytes:int32
    FETCH response v2   => highWatermark:int64 payloadBytes:int32 payload (stored records, cut anywhere)
    METADATA request v1 => topicCount:int32 topic*
    METADATA response v1=> topicCount:int32 (name partitionCount:int32
                           (partition:int32 logStartOffset:int64 highWatermark:int64)*)*
    stored record       => size:int32 crc32c:uint32 payload
    string              => length:uint16 utf-8 bytes
"""

import struct
from dataclasses import dataclass, field

from .crc32c import crc32c

API_PRODUCE = 1
API_FETCH = 2
API_METADATA = 3

ACK_NONE = 0
ACK_WRITTEN = 1
ACK_FORCED = 2
ACK_BY_NAME = {"none": ACK_NONE, "written": ACK_WRITTEN, "forced": ACK_FORCED}

ERROR_NAMES = {
    0: "NONE",
    1: "UNKNOWN_TOPIC_OR_PARTITION",
    2: "OFFSET_OUT_OF_RANGE",
    3: "RECORD_TOO_LARGE",
    4: "UNSUPPORTED_VERSION",
    5: "CORRUPT_REQUEST",
    # Additions after v1 (docs/protocol.md).
    6: "STORAGE_ERROR",
    7: "REVISION_MISMATCH",
    8: "OFFSET_MISMATCH",
    9: "NOT_PRIMARY",
    10: "NO_PRIMARY",
    11: "INVALID_ARGUMENT",
    12: "TOPIC_READ_ONLY",
    13: "CLUSTER_UNAVAILABLE",
}
ERROR_CODES = {name: code for code, name in ERROR_NAMES.items()}

# Frame limits from the protocol: a request frame is 1..8 MiB after its length field; a response
# frame is at least its correlationId and errorCode.
FRAME_BYTES_MAX = 8 * 1024 * 1024
REQUEST_HEADER_BYTES = 8
RESPONSE_HEADER_BYTES = 6
RECORD_HEADER_BYTES = 8


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"UNKNOWN({code})")


class ProtocolError(Exception):
    """Bytes that do not follow the protocol."""


class CorruptRecord(ProtocolError):
    """A whole stored record whose CRC-32C does not match its payload."""


# ---- encoding -------------------------------------------------------------------------------------


def string(text: str) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) > 0xFFFF:
        raise ValueError(f"string: {len(raw)} bytes, expected <= 65535")
    return struct.pack(">H", len(raw)) + raw


def request_frame(api_key: int, version: int, correlation_id: int, payload: bytes) -> bytes:
    return (
        struct.pack(">ihhi", REQUEST_HEADER_BYTES + len(payload), api_key, version, correlation_id)
        + payload
    )


def response_frame(correlation_id: int, error_code: int, body: bytes = b"") -> bytes:
    return struct.pack(">iih", RESPONSE_HEADER_BYTES + len(body), correlation_id, error_code) + body


def produce_v1(topic: str, partition: int, ack: int, records: list[bytes]) -> bytes:
    parts = [string(topic), struct.pack(">ibi", partition, ack, len(records))]
    for record in records:
        parts.append(struct.pack(">i", len(record)))
        parts.append(record)
    return b"".join(parts)


def fetch_v2(
    topic: str, partition: int, offset: int, max_bytes: int, max_wait_ms: int = 0, min_bytes: int = 0
) -> bytes:
    return string(topic) + struct.pack(">iqiii", partition, offset, max_bytes, max_wait_ms, min_bytes)


def metadata_v1(topics: list[str]) -> bytes:
    return struct.pack(">i", len(topics)) + b"".join(string(t) for t in topics)


def stored_record(payload: bytes, crc: int | None = None) -> bytes:
    """A record as the broker stores and serves it; `crc` overrides the checksum (to corrupt it)."""
    return struct.pack(">iI", len(payload), crc32c(payload) if crc is None else crc) + payload


def produce_body(base_offset: int, log_end_offset: int) -> bytes:
    return struct.pack(">qq", base_offset, log_end_offset)


def fetch_body(high_watermark: int, payload: bytes) -> bytes:
    return struct.pack(">qi", high_watermark, len(payload)) + payload


def metadata_body(topics: dict[str, list[tuple[int, int, int]]]) -> bytes:
    parts = [struct.pack(">i", len(topics))]
    for name in sorted(topics):
        partitions = topics[name]
        parts.append(string(name) + struct.pack(">i", len(partitions)))
        for partition, log_start, high_watermark in partitions:
            parts.append(struct.pack(">iqq", partition, log_start, high_watermark))
    return b"".join(parts)


# ---- decoding -------------------------------------------------------------------------------------


class Reader:
    """A cursor over bytes; every read past the end is a ProtocolError saying what was missing."""

    def __init__(self, data: bytes, what: str):
        self.data = data
        self.pos = 0
        self.what = what

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, count: int, field_name: str) -> bytes:
        if count < 0 or count > self.remaining:
            raise ProtocolError(
                f"{self.what}: {field_name} needs {count} bytes, {self.remaining} remain"
            )
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk

    def unpack(self, fmt: str, field_name: str):
        values = struct.unpack(fmt, self.take(struct.calcsize(fmt), field_name))
        return values[0] if len(values) == 1 else values

    def string(self, field_name: str) -> str:
        length = self.unpack(">H", f"{field_name} length")
        raw = self.take(length, field_name)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError(f"{self.what}: {field_name} is not utf-8") from error


def parse_produce_body(body: bytes) -> tuple[int, int]:
    reader = Reader(body, "PRODUCE response")
    return reader.unpack(">qq", "baseOffset logEndOffset")


def parse_fetch_body(body: bytes) -> tuple[int, bytes]:
    reader = Reader(body, "FETCH response")
    high_watermark, payload_bytes = reader.unpack(">qi", "highWatermark payloadBytes")
    if payload_bytes != reader.remaining:
        raise ProtocolError(
            f"FETCH response: payloadBytes {payload_bytes}, but {reader.remaining} bytes remain"
        )
    return high_watermark, reader.take(payload_bytes, "payload")


def parse_metadata_body(body: bytes) -> dict[str, list[tuple[int, int, int]]]:
    reader = Reader(body, "METADATA response")
    topics = {}
    for _ in range(reader.unpack(">i", "topicCount")):
        name = reader.string("topic name")
        count = reader.unpack(">i", "partitionCount")
        topics[name] = [reader.unpack(">iqq", "partition entry") for _ in range(count)]
    return topics


@dataclass
class Records:
    """Whole records of a FETCH payload, and what followed them."""

    records: list[bytes]
    tail_bytes: int  # bytes after the last whole record (a truncated record or header)
    next_size: int | None  # the size field of the truncated record, when its header arrived


def split_records(payload: bytes) -> Records:
    records = []
    pos = 0
    while len(payload) - pos >= RECORD_HEADER_BYTES:
        size, crc = struct.unpack_from(">iI", payload, pos)
        if size <= 0:
            raise ProtocolError(f"stored record at byte {pos}: size {size}, expected > 0")
        end = pos + RECORD_HEADER_BYTES + size
        if end > len(payload):
            return Records(records, len(payload) - pos, size)
        record = payload[pos + RECORD_HEADER_BYTES : end]
        if crc32c(record) != crc:
            raise CorruptRecord(
                f"stored record at byte {pos}: crc32c {crc:#010x}, payload gives {crc32c(record):#010x}"
            )
        records.append(record)
        pos = end
    return Records(records, len(payload) - pos, None)


@dataclass
class Request:
    """A request as the harness's own rogue broker decoded it."""

    api_key: int
    version: int
    correlation_id: int
    topic: str | None = None
    partition: int | None = None
    ack: int | None = None
    records: list[bytes] = field(default_factory=list)
    offset: int | None = None
    max_bytes: int | None = None
    topics: list[str] = field(default_factory=list)


def parse_request(frame: bytes) -> Request:
    """Decode a request frame body (everything after frameLength)."""
    reader = Reader(frame, "request")
    api_key, version, correlation_id = reader.unpack(">hhi", "header")
    request = Request(api_key, version, correlation_id)
    if api_key == API_PRODUCE:
        request.topic = reader.string("topic")
        request.partition, request.ack, count = reader.unpack(">ibi", "partition ackPolicy count")
        for index in range(count):
            size = reader.unpack(">i", f"record {index} size")
            request.records.append(reader.take(size, f"record {index}"))
    elif api_key == API_FETCH:
        request.topic = reader.string("topic")
        request.partition, request.offset, request.max_bytes = reader.unpack(
            ">iqi", "partition fetchOffset maxBytes"
        )
    elif api_key == API_METADATA:
        for index in range(reader.unpack(">i", "topicCount")):
            request.topics.append(reader.string(f"topic {index}"))
    return request
