"""The codec: requests to bytes, bytes to responses. No sockets, no threads, no event loop.

Shared by the synchronous client and ``booblik.aio``, so both read the wire one way. Big-endian
throughout; a string is a u16 byte length and UTF-8 bytes.

    request frame  => frameLength:int32 apiKey:int16 apiVersion:int16 correlationId:int32 payload
    response frame => frameLength:int32 correlationId:int32 errorCode:int16 body (only on success)
"""

from __future__ import annotations

import enum
import json
import struct
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import limits
from .capabilities import first_version_with
from .crc32c import crc32c
from .errors import CorruptRecordError, ProtocolError, RecordExceedsMaxBytesError

API_PRODUCE = 1
API_FETCH = 2
API_METADATA = 3
API_APPLY = 4
API_LIST = 5

PRODUCE_VERSION = 1
# PRODUCE v2 adds expectedOffset: the batch lands only where the partition ends at it.
PRODUCE_EXPECTING_VERSION = first_version_with(API_PRODUCE, "expectedOffset")
# Always v2, also when nothing is waited for, so the waiting fields are exercised on every fetch
# rather than only in the branch nobody debugs.
FETCH_VERSION = first_version_with(API_FETCH, "held")
METADATA_VERSION = 1
APPLY_VERSION = 1
LIST_VERSION = 1

API_NAMES = {
    API_PRODUCE: "PRODUCE",
    API_FETCH: "FETCH",
    API_METADATA: "METADATA",
    API_APPLY: "APPLY",
    API_LIST: "LIST",
}

# The offset a send under AckPolicy.NONE completes with: no offset exists until the writer reaches
# the batch, and the broker never says which it was.
OFFSET_UNKNOWN = -1

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_REQUEST_HEADER = struct.Struct(">ihhi")
_RESPONSE_HEADER = struct.Struct(">ih")
_RECORD_HEADER = struct.Struct(">iI")


class AckPolicy(enum.IntEnum):
    """When the broker answers a PRODUCE."""

    NONE = 0  # never: no answer, no refusal; the only mode that can lose an accepted record silently
    WRITTEN = 1  # once the batch is in the log (readable, in the page cache)
    FORCED = 2  # once the batch is on stable storage


@dataclass(frozen=True)
class ProduceResult:
    base_offset: int  # offset of the first record; the rest follow contiguously
    log_end_offset: int  # the log's end when the broker answered (may exceed base + count)


@dataclass(frozen=True)
class Record:
    offset: int
    payload: bytes


@dataclass(frozen=True)
class FetchResult:
    high_watermark: int
    records: list  # list[Record], whole and verified, in offset order
    next_offset: int  # where the next fetch starts: after the last whole record


@dataclass(frozen=True)
class PartitionMetadata:
    partition: int
    log_start_offset: int
    high_watermark: int


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    partitions: tuple  # tuple[PartitionMetadata], by id


# -- argument checks: caller mistakes are ValueError/TypeError naming the field, never a bad frame --


def check_int(name: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name}: {value}, expected {low} .. {high}")
    return value


def check_payload(payload) -> bytes:
    """One record to send on its own or in a batch the client forms: bytes, and not empty.

    The broker refuses an empty record with CORRUPT_REQUEST, and with it every record that shares
    its request; refused here, it fails alone and before anything is sent.
    """
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise TypeError(f"payload: expected bytes, got {type(payload).__name__}")
    if len(payload) == 0:
        raise ValueError("payload: empty, expected at least 1 byte (the broker refuses an empty record)")
    return bytes(payload)


def encode_string(name: str, value: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected str, got {type(value).__name__}")
    data = value.encode("utf-8")
    if len(data) > limits.UINT16_MAX:
        raise ValueError(f"{name}: {len(data)} bytes of UTF-8, expected at most {limits.UINT16_MAX}")
    return _U16.pack(len(data)) + data


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid topic name (naming the first character not allowed), or None."""
    if len(name) == 0:
        return f"is empty, expected 1..{limits.TOPIC_NAME_CHARS_MAX} characters"
    if len(name) > limits.TOPIC_NAME_CHARS_MAX:
        return f"has {len(name)} characters, expected at most {limits.TOPIC_NAME_CHARS_MAX}"
    for at, char in enumerate(name, start=1):
        category = unicodedata.category(char)
        if not (category.startswith("L") or category == "Nd" or char in "._-"):
            return (
                'has a character other than a letter, a digit, ".", "_" or "-": '
                f"{json.dumps(char, ensure_ascii=False)} at character {at}"
            )
    return None


def check_topic_name(name: str) -> str:
    """``name`` when it is a valid topic name; else ValueError saying what is wrong with it."""
    if not isinstance(name, str):
        raise TypeError(f"topic: expected str, got {type(name).__name__}")
    problem = topic_name_problem(name)
    if problem is not None:
        raise ValueError(f"topic: {json.dumps(name, ensure_ascii=False)} {problem}")
    return name


# -- frames --


def encode_request(api_key: int, api_version: int, correlation_id: int, payload: bytes) -> bytes:
    """A whole request frame. Refuses one over the frame cap: the broker would drop the connection."""
    frame_length = limits.REQUEST_HEADER_BYTES - 4 + len(payload)
    if frame_length > limits.FRAME_BYTES_MAX:
        raise ValueError(
            f"request: {frame_length} bytes, expected at most {limits.FRAME_BYTES_MAX}; send fewer or smaller records"
        )
    return _REQUEST_HEADER.pack(frame_length, api_key, api_version, correlation_id) + payload


# What an HTTP server's answer starts with ("HTTP/1.1 400 ..."). Read as a length prefix it is
# 1213486160, which says nothing to a user who dialled the broker's HTTP port by mistake.
HTTP_ANSWER_PREFIX = b"HTTP"


def response_frame_length(prefix: bytes, address: str = "the broker") -> int:
    """The frameLength of a response from its 4-byte prefix, refused when outside 6 .. 8 MiB.

    An HTTP answer is named as such, with where the booblik port is set.
    """
    if prefix == HTTP_ANSWER_PREFIX:
        raise ProtocolError(f"{address} speaks HTTP; the booblik port is set by booblik.port")
    (length,) = _I32.unpack(prefix)
    if not limits.RESPONSE_HEADER_BYTES <= length <= limits.FRAME_BYTES_MAX:
        raise ProtocolError(
            f"response frame length {length}, expected {limits.RESPONSE_HEADER_BYTES} .. {limits.FRAME_BYTES_MAX}"
        )
    return length


def split_response(frame: bytes) -> tuple[int, int, bytes]:
    """A response frame (without its length prefix) as (correlationId, errorCode, body)."""
    if len(frame) < limits.RESPONSE_HEADER_BYTES:
        raise ProtocolError(f"response frame of {len(frame)} bytes, shorter than its 6-byte header")
    correlation_id, error_code = _RESPONSE_HEADER.unpack_from(frame)
    return correlation_id, error_code, frame[limits.RESPONSE_HEADER_BYTES :]


class BodyReader:
    """Reads fields from a response body; running past the end is a ProtocolError saying where.
    Shared with the other codec modules of the package (booblik.topics, booblik.refusals)."""

    def __init__(self, what: str, body: bytes) -> None:
        self.what = what
        self.body = body
        self.pos = 0

    def _take(self, field: str, size: int) -> int:
        start = self.pos
        if start + size > len(self.body):
            raise ProtocolError(f"{self.what}: {field} needs {size} bytes at byte {start}, body has {len(self.body)}")
        self.pos = start + size
        return start

    def i8(self, field: str) -> int:
        return _I8.unpack_from(self.body, self._take(field, 1))[0]

    def i16(self, field: str) -> int:
        return _I16.unpack_from(self.body, self._take(field, 2))[0]

    def i32(self, field: str) -> int:
        return _I32.unpack_from(self.body, self._take(field, 4))[0]

    def i64(self, field: str) -> int:
        return _I64.unpack_from(self.body, self._take(field, 8))[0]

    def string(self, field: str) -> str:
        length = _U16.unpack_from(self.body, self._take(field, 2))[0]
        start = self._take(field, length)
        try:
            return self.body[start : start + length].decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError(f"{self.what}: {field} is not UTF-8") from error

    def rest(self, field: str, size: int) -> bytes:
        start = self._take(field, size)
        return self.body[start : start + size]

    def end(self) -> None:
        if self.pos != len(self.body):
            raise ProtocolError(f"{self.what}: {len(self.body) - self.pos} unexpected bytes after the last field")


# -- PRODUCE v1 and v2 --
#   request v1 => topic:string partition:int32 ackPolicy:int8 recordCount:int32 [size:int32 bytes]
#   request v2 => topic:string partition:int32 ackPolicy:int8 expectedOffset:int64 recordCount:int32 [...]
#   response   => baseOffset:int64 logEndOffset:int64


def produce_overhead_bytes(topic: str) -> int:
    """Bytes of a PRODUCE frame that are not records: the most records of one frame can fill is the cap minus this."""
    return limits.REQUEST_HEADER_BYTES + 2 + len(topic.encode("utf-8")) + 4 + 1 + 4


def encode_produce_request(
    topic: str,
    partition: int,
    ack: AckPolicy,
    records: Sequence[bytes],
    expected_offset: int | None = None,
    *,
    v2_layout: bool = False,
) -> bytes:
    """A PRODUCE payload: v1, or v2 (PRODUCE_EXPECTING_VERSION) when ``expected_offset`` is given.
    ``v2_layout`` always writes v2's expectedOffset field (-1, anywhere, when none is given): the
    bytes of PRODUCE v3."""
    if isinstance(records, (bytes, bytearray, memoryview, str)):
        raise TypeError("records: expected a list of records, got a single bytes/str value; wrap it in a list")
    records = list(records)
    if not records:
        raise ValueError("records: empty, expected at least one record")
    ack = AckPolicy(ack)
    parts = [
        encode_string("topic", check_topic_name(topic)),
        _I32.pack(check_int("partition", partition, 0, limits.INT32_MAX)),
        _I8.pack(ack),
    ]
    if expected_offset is not None:
        parts.append(_I64.pack(check_int("expected_offset", expected_offset, 0, limits.INT64_MAX)))
    elif v2_layout:
        parts.append(_I64.pack(-1))
    parts.append(_I32.pack(len(records)))
    for index, record in enumerate(records):
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"records[{index}]: expected bytes, got {type(record).__name__}")
        # A zero-length record is not refused here: the broker refuses it (and its whole batch), and
        # says so. The producers and Topic.send refuse one themselves, before it can share a batch.
        parts.append(_I32.pack(len(record)))
        parts.append(bytes(record))
    return b"".join(parts)


def decode_produce_response(body: bytes) -> ProduceResult:
    reader = BodyReader("PRODUCE response", body)
    result = ProduceResult(reader.i64("baseOffset"), reader.i64("logEndOffset"))
    reader.end()
    return result


# -- FETCH v2 --
#   request  => topic:string partition:int32 fetchOffset:int64 maxBytes:int32 maxWaitMillis:int32 minBytes:int32
#   response => highWatermark:int64 payloadBytes:int32 records
#   record   => size:int32 crc32c:uint32 payload


def encode_fetch_request(
    topic: str, partition: int, offset: int, max_bytes: int, max_wait_millis: int, min_bytes: int
) -> bytes:
    check_int("max_bytes", max_bytes, 1, limits.FETCH_MAX_BYTES_MAX)
    check_int("min_bytes", min_bytes, 0, max_bytes)
    return b"".join(
        (
            encode_string("topic", topic),
            _I32.pack(check_int("partition", partition, 0, limits.INT32_MAX)),
            _I64.pack(check_int("offset", offset, 0, limits.INT64_MAX)),
            _I32.pack(max_bytes),
            _I32.pack(check_int("max_wait_millis", max_wait_millis, 0, limits.INT32_MAX)),
            _I32.pack(min_bytes),
        )
    )


def decode_fetch_response(body: bytes, fetch_offset: int, max_bytes: int) -> FetchResult:
    reader = BodyReader("FETCH response", body)
    high_watermark = reader.i64("highWatermark")
    payload_bytes = reader.i32("payloadBytes")
    remaining = len(body) - reader.pos
    if payload_bytes != remaining:
        raise ProtocolError(f"FETCH response: payloadBytes {payload_bytes}, but {remaining} bytes remain in the frame")
    records, next_offset = decode_records(reader.rest("records", payload_bytes), fetch_offset, max_bytes)
    return FetchResult(high_watermark, records, next_offset)


def decode_records(payload: bytes, fetch_offset: int, max_bytes: int) -> tuple[list, int]:
    """Whole, verified records from a fetch payload, and the offset after the last of them.

    The payload is cut on a byte boundary, so it may end inside a record or its header: that tail is
    dropped and asked for again from its start. A tail with no whole record before it is the next
    record not fitting in ``max_bytes``: it will never arrive whole, so that is an error, not an
    empty answer (retrying silently would stall exactly like a caught-up consumer).
    """
    records = []
    offset = fetch_offset
    pos = 0
    end = len(payload)
    view = memoryview(payload)
    header_bytes = limits.RECORD_HEADER_BYTES
    while end - pos >= header_bytes:
        size, stored_crc = _RECORD_HEADER.unpack_from(payload, pos)
        if size <= 0:
            raise ProtocolError(f"FETCH response: record at offset {offset} has size {size}, expected > 0")
        if end - pos - header_bytes < size:
            break  # truncated tail: checked below, never taken for corruption
        start = pos + header_bytes
        data = bytes(view[start : start + size])
        actual_crc = crc32c(data)
        if actual_crc != stored_crc:
            raise CorruptRecordError(offset, stored_crc, actual_crc)
        records.append(Record(offset, data))
        offset += 1
        pos = start + size
    if not records and pos < end:
        _refuse_record_that_cannot_fit(payload, pos, offset, max_bytes)
    return records, offset


def _refuse_record_that_cannot_fit(payload: bytes, pos: int, offset: int, max_bytes: int) -> None:
    header_bytes = limits.RECORD_HEADER_BYTES
    if len(payload) - pos >= header_bytes:
        (size,) = _I32.unpack_from(payload, pos)
        if size + header_bytes > max_bytes:
            raise RecordExceedsMaxBytesError(offset, size, max_bytes)
    elif max_bytes < header_bytes:
        raise RecordExceedsMaxBytesError(offset, None, max_bytes)
    # Otherwise the record would fit in max_bytes and the broker merely stopped early (a segment's
    # end, say): nothing whole this time, and the next fetch asks again from the same offset.


# -- METADATA v1 --
#   request  => topicCount:int32 [topic:string]            (0 topics asks for every topic)
#   response => topicCount:int32 [name:string partitionCount:int32 [partition:int32 logStartOffset:int64 highWatermark:int64]]


def encode_metadata_request(topics: Iterable[str]) -> bytes:
    names = list(topics)
    parts = [_I32.pack(len(names))]
    for index, name in enumerate(names):
        parts.append(encode_string(f"topics[{index}]", name))
    return b"".join(parts)


def decode_metadata_response(body: bytes) -> list:
    reader = BodyReader("METADATA response", body)
    topic_count = reader.i32("topicCount")
    if topic_count < 0:
        raise ProtocolError(f"METADATA response: topicCount {topic_count}, expected >= 0")
    topics = []
    for _ in range(topic_count):
        name = reader.string("topic name")
        partition_count = reader.i32("partitionCount")
        if partition_count < 0:
            raise ProtocolError(
                f"METADATA response: topic {name!r} has partitionCount {partition_count}, expected >= 0"
            )
        partitions = []
        for _ in range(partition_count):
            partitions.append(
                PartitionMetadata(reader.i32("partition"), reader.i64("logStartOffset"), reader.i64("highWatermark"))
            )
        partitions.sort(key=lambda p: p.partition)
        topics.append(TopicMetadata(name, tuple(partitions)))
    reader.end()
    return topics


def only_topic(topics: list, name: str) -> TopicMetadata:
    """The one topic a METADATA request for ``name`` must have answered with."""
    if len(topics) != 1 or topics[0].name != name:
        raise ProtocolError(f"METADATA response: asked for topic {name!r}, got {[t.name for t in topics]}")
    return topics[0]


def describe_metadata(topics) -> str:
    """The label of a METADATA request: ``METADATA orders, payments``, so a refusal names the topics."""
    return "METADATA " + ", ".join(topics) if topics else "METADATA (every topic)"


def describe(api_key: int, topic: str | None = None, partition: int | None = None) -> str:
    """A short label for errors: ``PRODUCE orders/2``."""
    label = API_NAMES.get(api_key, f"api {api_key}")
    if topic is not None:
        label += f" {topic}" + (f"/{partition}" if partition is not None else "")
    return label
