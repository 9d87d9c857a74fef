"""booblik: a client for booblik, a message broker on an append-only log.

Synchronous, on ``socket`` and ``struct``; the asyncio client is ``booblik.aio``. No dependencies.
"""

from .batching import ProducerConfig
from .connection import Connection, Topic
from .consumer import Consumer
from .crc32c import crc32c
from .errors import (
    BooblikError,
    BrokerError,
    ConnectionClosedError,
    CorruptRecordError,
    ErrorCode,
    ProducerClosedError,
    ProtocolError,
    RecordExceedsMaxBytesError,
)
from .partitioner import fnv1a, partition_index
from .producer import Producer
from .wire import (
    OFFSET_UNKNOWN,
    AckPolicy,
    FetchResult,
    PartitionMetadata,
    ProduceResult,
    Record,
    TopicMetadata,
)

__version__ = "0.1.0"

__all__ = [
    "OFFSET_UNKNOWN",
    "AckPolicy",
    "BooblikError",
    "BrokerError",
    "Connection",
    "ConnectionClosedError",
    "Consumer",
    "CorruptRecordError",
    "ErrorCode",
    "FetchResult",
    "PartitionMetadata",
    "ProduceResult",
    "Producer",
    "ProducerClosedError",
    "ProducerConfig",
    "ProtocolError",
    "Record",
    "RecordExceedsMaxBytesError",
    "Topic",
    "TopicMetadata",
    "crc32c",
    "fnv1a",
    "partition_index",
]
