"""booblik.aio: the asyncio client, beside the synchronous one and sharing its codec (booblik.wire).

async with Connection.connect("localhost:9092") as connection:
    await connection.produce("orders", 0, [b"hello"])
"""

from ..batching import ProducerConfig
from ..errors import (
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
from ..fragments import ALL_PARTITIONS, Fragment, FragmentLocation, PartitionFragments
from ..route_v2 import ReplicaFlag, ReplicaState, RouteV2
from ..scram import BrokerNotProvenError
from ..tls import TlsHandshakeError
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
    "is_outcome_unknown",
]
