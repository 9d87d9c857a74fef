"""booblik: a client for booblik, a message broker on an append-only log.

Synchronous, on ``socket`` and ``struct``; the asyncio client is ``booblik.aio``. No dependencies.
"""

from .batching import ProducerConfig
from .client import Client
from .connection import Connection, Topic
from .consumer import Consumer
from .crc32c import crc32c
from .errors import (
    AuthenticationFailedError,
    AuthenticationRequiredError,
    BooblikError,
    BrokerError,
    ConnectionClosedError,
    CorruptRecordError,
    CredentialsExpiredError,
    ErrorCode,
    InvalidArgumentRefusal,
    NotAuthorizedError,
    NotPrimaryError,
    OffsetMismatchError,
    OutcomeUnknownError,
    ProducerClosedError,
    ProtocolError,
    RecordExceedsMaxBytesError,
    RevisionMismatchError,
    TlsRequiredError,
    is_outcome_unknown,
)
from .fragments import ALL_PARTITIONS, Fragment, FragmentLocation, PartitionFragments
from .partitioner import fnv1a, partition_index
from .producer import Producer
from .route_v2 import ReplicaFlag, ReplicaState, RouteV2
from .scram import BrokerNotProvenError
from .tls import TlsHandshakeError
from .topics import (
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
    "ALL_PARTITIONS",
    "FLAG_READ_ONLY",
    "OFFSET_UNKNOWN",
    "REVISION_ANY",
    "REVISION_MUST_NOT_EXIST",
    "AckPolicy",
    "AuthenticationFailedError",
    "AuthenticationRequiredError",
    "BooblikError",
    "BrokerError",
    "BrokerNotProvenError",
    "Client",
    "Connection",
    "ConnectionClosedError",
    "Consumer",
    "CorruptRecordError",
    "CredentialsExpiredError",
    "Delete",
    "ErrorCode",
    "FetchResult",
    "Fragment",
    "FragmentLocation",
    "InvalidArgumentRefusal",
    "ListedTopic",
    "NotAuthorizedError",
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
    "TlsHandshakeError",
    "TlsRequiredError",
    "Topic",
    "TopicListing",
    "TopicMetadata",
    "TopicSpec",
    "Upsert",
    "crc32c",
    "fnv1a",
    "partition_index",
    "is_outcome_unknown",
]
