"""Where each segment of a partition lives (LIST_FRAGMENTS v1) and its codec.

    LIST_FRAGMENTS request v1  => topic:string partition:int32
    LIST_FRAGMENTS response v1 => partitionCount:int32
      [partition:int32 logStartOffset:int64 highWatermark:int64 fragmentCount:int32
        [baseOffset:int64 endOffset:int64 sizeBytes:int64 location:int8 persistedMillis:int64]*fragmentCount
      ]*partitionCount

``partition`` -1 (``ALL_PARTITIONS``) asks for every partition. Each partition's segments come
oldest first; ``endOffset`` is one past the last offset (equal to ``baseOffset`` for an empty
segment), and the last segment is the active one, never persisted yet. An unknown topic or
partition is refused UNKNOWN_TOPIC_OR_PARTITION; a broker that predates the call, UNSUPPORTED_VERSION.
"""

from __future__ import annotations

import datetime
import enum
import struct
from dataclasses import dataclass

from . import limits
from .errors import ProtocolError
from .wire import BodyReader, check_int, encode_string

API_LIST_FRAGMENTS = 7
LIST_FRAGMENTS_VERSION = 1
# The partition of a request that asks for every partition of the topic.
ALL_PARTITIONS = -1
# persistedMillis of a segment that is not in the store.
NOT_PERSISTED = -1

_FRAGMENT_BYTES = 8 + 8 + 8 + 1 + 8
_PARTITION_HEAD_BYTES = 4 + 8 + 8 + 4
_I32 = struct.Struct(">i")


class FragmentLocation(enum.IntEnum):
    """Where a segment's bytes are."""

    LOCAL = 1  # only on the broker's disk
    STORE = 2  # only in the topic's store (read through it)
    BOTH = 3

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Fragment:
    """One segment of a partition's history."""

    base_offset: int  # the first offset
    end_offset: int  # one past the last offset; equal to base_offset when the segment is empty
    size_bytes: int  # the stored bytes
    location: FragmentLocation
    persisted_millis: int  # when its upload completed (ms since the epoch); NOT_PERSISTED (-1) when not in the store

    @property
    def first_offset(self) -> int:
        return self.base_offset

    @property
    def last_offset(self) -> int | None:
        """The last offset in the segment, or None when it holds no record."""
        return self.end_offset - 1 if self.end_offset > self.base_offset else None

    @property
    def in_store(self) -> bool:
        return self.location in (FragmentLocation.STORE, FragmentLocation.BOTH)

    @property
    def persisted_at(self) -> datetime.datetime | None:
        """When the upload completed (UTC), or None when the segment is not in the store."""
        if self.persisted_millis == NOT_PERSISTED:
            return None
        return datetime.datetime.fromtimestamp(self.persisted_millis / 1000, tz=datetime.timezone.utc)


@dataclass(frozen=True)
class PartitionFragments:
    partition: int
    log_start_offset: int  # the oldest offset of the whole history, store included
    high_watermark: int
    fragments: tuple  # tuple[Fragment], oldest first


def encode_list_fragments_request(topic: str, partition: int = ALL_PARTITIONS) -> bytes:
    partition = check_int("partition", partition, ALL_PARTITIONS, limits.INT32_MAX)
    return encode_string("topic", topic) + _I32.pack(partition)


def decode_list_fragments_response(body: bytes) -> list:
    """list[PartitionFragments]; a value outside the protocol's rules is a ProtocolError naming it."""
    reader = BodyReader("LIST_FRAGMENTS response", body)
    count = reader.i32("partitionCount")
    if not 0 <= count <= (len(body) - reader.pos) // _PARTITION_HEAD_BYTES:
        raise ProtocolError(f"LIST_FRAGMENTS response: partitionCount {count} does not fit the bytes left")
    partitions = []
    for index in range(count):
        at = f"partitions[{index}]"
        partition = _at_least(reader, reader.i32(f"{at}.partition"), f"{at}.partition", 0)
        log_start = _at_least(reader, reader.i64(f"{at}.logStartOffset"), f"{at}.logStartOffset", 0)
        high_watermark = _at_least(reader, reader.i64(f"{at}.highWatermark"), f"{at}.highWatermark", 0)
        fragment_count = reader.i32(f"{at}.fragmentCount")
        if not 0 <= fragment_count <= (len(body) - reader.pos) // _FRAGMENT_BYTES:
            raise ProtocolError(
                f"LIST_FRAGMENTS response: {at}.fragmentCount {fragment_count} does not fit the bytes left"
            )
        fragments = tuple(_decode_fragment(reader, f"{at}.fragments[{i}]") for i in range(fragment_count))
        partitions.append(PartitionFragments(partition, log_start, high_watermark, fragments))
    reader.end()
    return partitions


def _decode_fragment(reader: BodyReader, at: str) -> Fragment:
    base = _at_least(reader, reader.i64(f"{at}.baseOffset"), f"{at}.baseOffset", 0)
    end = reader.i64(f"{at}.endOffset")
    if end < base:
        raise ProtocolError(f"{reader.what}: {at}.endOffset: {end}, expected >= baseOffset ({base})")
    size = _at_least(reader, reader.i64(f"{at}.sizeBytes"), f"{at}.sizeBytes", 0)
    location = reader.i8(f"{at}.location")
    if location not in FragmentLocation._value2member_map_:
        raise ProtocolError(f"{reader.what}: {at}.location: {location}, expected 1 (local), 2 (store) or 3 (both)")
    persisted = _at_least(reader, reader.i64(f"{at}.persistedMillis"), f"{at}.persistedMillis", NOT_PERSISTED)
    return Fragment(base, end, size, FragmentLocation(location), persisted)


def _at_least(reader: BodyReader, value: int, field: str, low: int) -> int:
    if value < low:
        raise ProtocolError(f"{reader.what}: {field}: {value}, expected >= {low}")
    return value


def list_fragments_call(topic: str, partition: int | None) -> tuple:
    """(payload, label for errors) of a LIST_FRAGMENTS: ``partition`` None asks for every partition."""
    if partition is None:
        return encode_list_fragments_request(topic, ALL_PARTITIONS), f"LIST_FRAGMENTS {topic}"
    check_int("partition", partition, 0, limits.INT32_MAX)
    return encode_list_fragments_request(topic, partition), f"LIST_FRAGMENTS {topic}/{partition}"
