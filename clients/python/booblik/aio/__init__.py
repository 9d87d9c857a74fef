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
    InvalidArgumentRefusal,
    NotPrimaryError,
    OffsetMismatchError,
    OutcomeUnknownError,
    ProducerClosedError,
    ProtocolError,
    RecordExceedsMaxBytesError,
    RevisionMismatchError,
    is_outcome_unknown,
)
from ..fragments import ALL_PARTITIONS, Fragment, FragmentLocation, PartitionFragments
from ..route_v2 import ReplicaFlag, ReplicaState, RouteV2
from ..topics import (
    FLAG_READ_ONLY,
    REVISION_ANY,
    REVISION_MUST_NOT_EXIST,
    Delete,
    ListedTopic,
    Route,
    TopicListing,
    TopicSpec,
    Upsert,
)
from ..wire import OFFSET_UNKNOWN, AckPolicy, FetchResult, PartitionMetadata, ProduceResult, Record, TopicMetadata
from .client import Client
from .connection import Connection, Topic
from .consumer import Consumer
from .producer import Producer

__all__ = [
    "ALL_PARTITIONS",
    "FLAG_READ_ONLY",
    "OFFSET_UNKNOWN",
    "REVISION_ANY",
    "REVISION_MUST_NOT_EXIST",
    "AckPolicy",
    "BooblikError",
    "BrokerError",
    "Client",
    "Connection",
    "ConnectionClosedError",
    "Consumer",
    "CorruptRecordError",
    "Delete",
    "ErrorCode",
    "FetchResult",
    "Fragment",
    "FragmentLocation",
    "InvalidArgumentRefusal",
    "ListedTopic",
    "NotPrimaryError",
    "OffsetMismatchError",
    "OutcomeUnknownError",
    "PartitionFragments",
    "PartitionMetadata",
    "ProduceResult",
    "Producer",
    "ProducerClosedError",
    "ProducerConfig",
    "ProtocolError",
    "Record",
    "RecordExceedsMaxBytesError",
    "ReplicaFlag",
    "ReplicaState",
    "RevisionMismatchError",
    "Route",
    "RouteV2",
    "Topic",
    "TopicListing",
    "TopicMetadata",
    "TopicSpec",
    "Upsert",
    "is_outcome_unknown",
]
