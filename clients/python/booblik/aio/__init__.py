"""booblik.aio: the asyncio client, beside the synchronous one and sharing its codec (booblik.wire).

async with Connection.connect("localhost:9092") as connection:
    await connection.produce("orders", 0, [b"hello"])
"""

from ..batching import ProducerConfig
from ..errors import (
    BooblikError,
    BrokerError,
    ConnectionClosedError,
    CorruptRecordError,
    ErrorCode,
    ProducerClosedError,
    ProtocolError,
    RecordExceedsMaxBytesError,
)
from ..wire import OFFSET_UNKNOWN, AckPolicy, FetchResult, PartitionMetadata, ProduceResult, Record, TopicMetadata
from .connection import Connection, Topic
from .consumer import Consumer
from .producer import Producer

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
]
